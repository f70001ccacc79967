"""The record signal (docs/decisions.md#record-bm25) on a real index with the real model:
a short file is scored by BM25 as a whole, the sum of its matching pieces; a long file
is not; the fusion splits BM25's weight between pieces and records."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import write_config, write_tree
from vq.core.settings import load_settings
from vq.query.records import RECORD
from vq.query.search import Query, search

pytestmark = pytest.mark.model

RECORD_BYTES = 4096

# The query's words are spread over the record's sections: "cache" in its title,
# "eviction" in its Context, "memory" in its Decision.
SPREAD = """\
# 7. Cache for the search service

## Context

Results were recomputed on every request; eviction of stale entries was manual.

## Decision

Keep the last results in memory, bounded by a size limit.
"""
# One section holds two of the words, nothing else in the file does.
FOCUSED = """\
# 8. Logging

## Context

Logs were lost on restart.

## Decision

Ship logs to the collector; cache eviction events are logged at debug level.
"""
LONG = "# Handbook\n\n" + "".join(
    f"## Topic {n}\n\nGeneral guidance number {n} about the service and its cache.\n\n"
    for n in range(120))


def make(tmp_path, **search_keys):
    root = tmp_path / "adr"
    write_tree(root, {"0007-cache.md": SPREAD, "0008-logging.md": FOCUSED,
                      "handbook.md": LONG})
    assert (root / "handbook.md").stat().st_size > RECORD_BYTES
    return load_settings(str(write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"adr": {"path": str(root), "kind": "notes"}},
        "search": search_keys})))


def with_search(settings, **keys):
    return dataclasses.replace(settings, search=dataclasses.replace(settings.search, **keys))


def test_a_short_file_is_scored_whole_and_a_long_one_is_not(tmp_path, build):
    settings = make(tmp_path, record_chars=RECORD_BYTES)
    assert build(settings).outcome == "ok"
    query = "cache eviction memory"
    res = search(settings, Query(query, method="hybrid", limit=30))
    assert "0.2·bm25 + 0.2·record" in res.fusion and res.pools.get(RECORD)
    by_path: dict[str, set[float]] = {}
    for h in res.hits:
        if RECORD in h.signals:
            by_path.setdefault(h.path, set()).add(h.signals[RECORD]["score"])
    assert "handbook.md" not in by_path  # over the size: no record score
    assert all(len(s) == 1 for s in by_path.values())  # one score per record, on each piece
    # the record's score is the sum of its matching pieces' own BM25 scores
    pieces = search(with_search(settings, record_chars=0),
                    Query(query, method="lexical", limit=100)).hits
    for path, (score,) in by_path.items():
        total = sum(h.signals["bm25"]["score"] for h in pieces if h.path == path)
        assert score == pytest.approx(total, rel=1e-4)
    # the record holding every word, spread over its sections, outscores the one whose
    # single section holds two of them
    (spread,), (focused,) = by_path["0007-cache.md"], by_path["0008-logging.md"]
    assert spread > focused


def test_off_the_signal_does_not_run(tmp_path, build):
    settings = make(tmp_path)  # record_chars: 0, the default
    assert build(settings).outcome == "ok"
    res = search(settings, Query("cache eviction memory", method="hybrid"))
    assert RECORD not in res.pools and "record" not in res.fusion
    assert all(RECORD not in h.signals for h in res.hits)
    lexical = search(with_search(settings, record_chars=RECORD_BYTES),
                     Query("cache eviction memory", method="lexical"))
    assert RECORD not in lexical.pools  # hybrid only
