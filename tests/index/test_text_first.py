"""Text first, vectors after: a build is searchable before it is embedded, says how much
is embedded, and a stopped build's successor encodes only what is left.

The deterministic test encoder (``vq-test/hash-384``) stands in for the model: what is
under test is when rows and vectors land, not what the vectors mean.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.reliability.harness import write_vault
from vq.core import store
from vq.core.build_progress import read_record
from vq.core.hash_encoder import HashEncoder
from vq.indexer import embed, engine
from vq.jobs.runner import locked_build


@pytest.fixture
def small_batches(monkeypatch):
    """A text commit after every file and embed batches of at most 8 rows, so a small
    vault makes a build with many of each."""
    monkeypatch.setattr(engine, "TEXT_SECONDS", 0.0)
    monkeypatch.setattr(embed, "FIRST_BATCH", 8)
    monkeypatch.setattr(embed, "MIN_BATCH", 8)
    monkeypatch.setattr(embed, "MAX_BATCH", 8)


@pytest.fixture
def hash_vault(tmp_path, test_models, small_batches):
    from vq.core.settings import load_settings

    write_vault(tmp_path / "v", 7, files=24)
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "vaults": {"v": {"path": str(tmp_path / "v")}}})
    return config, load_settings(str(config))


class Recording(HashEncoder):
    """The test encoder, noting every text it encodes and calling ``during`` before
    encoding a batch (its return value True stops the build there)."""

    def __init__(self, name: str, during=None) -> None:
        super().__init__(name, 64)
        self.texts: list[str] = []
        self.batches = 0
        self.during = during

    def encode(self, texts, progress=None):
        self.batches += 1
        if self.during is not None:
            self.during(self)
        self.texts += texts
        return super().encode(texts, progress)


def test_a_search_during_the_first_build_answers_and_says_how_much_is_embedded(
        hash_vault, cli):
    config, settings = hash_vault
    seen = {}

    def search_now(enc):
        if enc.batches == 2:  # text all committed, one embed batch in
            seen["search"] = cli("--config", config, "search", "--json", "rollback release")
            seen["status"] = cli("--config", config, "status")
            seen["rows"] = store.open_for(settings).chunks.count_rows(embed.PENDING)

    summary = locked_build(settings, encoder=Recording(settings.model, search_now))
    assert summary.outcome == "ok"
    found = seen["search"]
    assert found.exit_code == 0, found.stderr
    assert json.loads(found.stdout), "no hits during the build"
    total = store.open_for(settings).chunks.count_rows()
    embedded = total - seen["rows"]
    assert 0 < seen["rows"] < total, "the search ran when nothing, or everything, was embedded"
    assert (f"notice: {embedded:,} of {total:,} chunks embedded; the others match by text "
            "only (a build is embedding the rest)") in found.stderr
    assert f"{embedded:,} of {total:,} chunks embedded" in seen["status"].stdout
    running = re.search(r"building \(embed\): ([\d,]+) of (~?)([\d,]+) chunks",
                        seen["status"].stdout)
    assert running, seen["status"].stdout
    shown_total = int(running[3].replace(",", ""))
    assert int(running[1]) == embedded and shown_total >= total
    assert running[2] or shown_total == total, "a total without ~ must be exact"
    assert read_record(settings.build_lock) is None, "a finished build left its record"
    quiet = cli("--config", config, "search", "rollback release")
    assert quiet.exit_code == 0 and "notice" not in quiet.stderr


def test_a_stopped_build_leaves_text_searchable_and_the_next_encodes_only_the_rest(
        hash_vault, cli):
    config, settings = hash_vault
    first = Recording(settings.model)
    summary = locked_build(settings, encoder=first, should_stop=lambda: first.batches >= 2)
    assert summary.outcome == "interrupted"
    index = store.open_for(settings)
    waiting, total = index.chunks.count_rows(embed.PENDING), index.chunks.count_rows()
    assert 0 < waiting < total
    record = read_record(settings.build_lock)
    assert record and record["pending_possible"] and record["table_pending"] == waiting
    stopped = cli("--config", config, "search", "rollback release")
    assert stopped.exit_code == 0
    assert "run `vq build` to embed the rest" in stopped.stderr

    second = Recording(settings.model)
    assert locked_build(settings, encoder=second).outcome == "ok"
    assert not set(first.texts) & set(second.texts), "a committed vector was encoded again"
    clean = Recording(settings.model)
    settings_clean = settings.__class__(**{**settings.__dict__,
                                           "index_dir": str(settings.index_dir) + "-clean"})
    assert locked_build(settings_clean, encoder=clean).outcome == "ok"
    assert sorted(first.texts + second.texts) == sorted(clean.texts)
    assert store.open_for(settings).chunks.count_rows(embed.PENDING) == 0
    assert read_record(settings.build_lock) is None


def test_rows_another_writer_took_mid_embed_are_not_read_as_a_stop(hash_vault):
    """A second builder on shared storage may replace a file whose rows this build
    counted as waiting for vectors; the build then fills fewer than it counted. That
    is no Ctrl-C: it used to end "interrupted" (exit 130, nothing on stderr)."""
    _, settings = hash_vault
    taken: list = []

    def other_writer(encoder) -> None:
        if taken:
            return
        index = store.open_for(settings)
        key, _ = embed.pending_files(index)[-1]  # embedded last: not in this batch
        for predicate in store.path_filter([key]):
            index.chunks.delete(predicate)
        taken.append(key)

    summary = locked_build(settings, encoder=Recording(settings.model, during=other_writer))
    assert taken, "the build never embedded"
    assert summary.outcome == "ok"


def test_an_edit_reuses_vectors_at_text_time_and_encodes_only_new_chunks(hash_vault):
    config, settings = hash_vault
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    note = sorted(settings.vaults[0].path.rglob("*.md"))[0]
    note.write_text(note.read_text() + "\n## Appendix\n\nan entirely new closing remark\n")
    again = Recording(settings.model)
    summary = locked_build(settings, encoder=again)
    assert summary.outcome == "ok" and summary.chunks_reused > 0
    assert again.texts and all("Appendix" in t or "closing remark" in t or note.name in t
                               for t in again.texts)


@pytest.mark.slow
def test_ctrl_c_keeps_the_committed_text_and_the_next_build_finishes_it(tmp_path, test_models):
    """A real `vq build` gets SIGINT while it commits text: it stops after the batch in
    hand (exit 130); what it committed stays searchable; the next build converges."""
    import signal

    from tests.reliability import harness
    from vq.core.build_progress import read_record as record_of

    vault, index = tmp_path / "v", tmp_path / "index"
    write_vault(vault, 3, files=40)
    config = harness.write_config(tmp_path / "vq.yaml", vault, index, batch=1,
                                  model=test_models)
    watch = harness.Watch(config, index)
    assert watch.until(lambda: (record_of(index / "build.lock") or {}).get("files_done", 0) >= 3)
    watch.proc.send_signal(signal.SIGINT)
    _, err = watch.proc.communicate(timeout=120)
    assert watch.proc.returncode == 130, err.decode()
    assert "stopping after the batch in hand" in err.decode()
    kept = store.open_index(str(index)).chunks.count_rows()
    assert kept > 0, "the committed text was thrown away"
    harness.subprocess_build(config)
    ref = harness.write_config(tmp_path / "ref.yaml", vault, tmp_path / "ref", model=test_models)
    harness.subprocess_build(ref)
    assert harness.snapshot(str(index)) == harness.snapshot(str(tmp_path / "ref"))


def _damage(settings) -> None:
    """Delete the chunks table's data files: no search can read the index."""
    for path in (Path(settings.index_dir) / "chunks.lance" / "data").glob("*.lance"):
        path.unlink()


def test_a_rebuild_over_a_readable_index_answers_from_the_old_one_until_its_swap(
        hash_vault, cli):
    config, settings = hash_vault
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    rows = store.open_for(settings).chunks.count_rows()
    seen = {}

    def search_now(enc):
        if enc.batches == 2:
            seen["search"] = cli("--config", config, "search", "--json", "rollback release")
            index = store.open_for(settings)
            seen["rows"] = (index.chunks.count_rows(), index.chunks.count_rows(embed.PENDING))

    summary = locked_build(settings, rebuild=True, encoder=Recording(settings.model, search_now))
    assert summary.outcome == "ok" and summary.rebuilt
    assert seen["rows"] == (rows, 0), "the rebuild's partial tables were visible before the swap"
    assert seen["search"].exit_code == 0 and json.loads(seen["search"].stdout)
    assert "chunks embedded" not in seen["search"].stderr  # every old row has vectors


def test_a_rebuild_over_a_damaged_index_is_text_first_and_a_stopped_one_is_continued(
        hash_vault, cli):
    """Nothing could be searched, so nothing is kept searchable: the rebuild writes in
    place, its text answers at once, and a stop keeps it for the next (plain) build."""
    config, settings = hash_vault
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    _damage(settings)
    assert cli("--config", config, "search", "rollback").exit_code == 2
    seen = {}

    def search_now(enc):
        if enc.batches == 2:
            seen["search"] = cli("--config", config, "search", "--json", "rollback release")

    first = Recording(settings.model, search_now)
    summary = locked_build(settings, rebuild=True, encoder=first,
                           should_stop=lambda: first.batches >= 3)
    assert summary.outcome == "interrupted"
    assert seen["search"].exit_code == 0 and json.loads(seen["search"].stdout)
    assert "chunks embedded" in seen["search"].stderr
    index = store.open_for(settings)
    assert 0 < index.chunks.count_rows(embed.PENDING) < index.chunks.count_rows()
    assert index.builds.count_rows() >= 2, "the build history before the damage was lost"
    assert not (Path(settings.index_dir) / store.STAGE_DIR).exists()
    second = Recording(settings.model)
    assert locked_build(settings, encoder=second).outcome == "ok"
    assert not set(first.texts) & set(second.texts), "a committed vector was encoded again"
    assert store.open_for(settings).chunks.count_rows(embed.PENDING) == 0


def _stop_a_rebuild(settings, batches: int = 2, model: str | None = None):
    """A `--rebuild` over the readable index, stopped after ``batches`` encode batches
    (its text all committed to the stage, some of its vectors): the encoder used."""
    from dataclasses import replace

    other = replace(settings, model=model) if model else settings
    encoder = Recording(other.model)
    summary = locked_build(other, rebuild=True, encoder=encoder,
                           should_stop=lambda: encoder.batches >= batches)
    assert summary.outcome == "interrupted" and encoder.texts
    assert (Path(settings.index_dir) / store.STAGE_DIR).is_dir(), "the stopped stage was dropped"
    return encoder


def _inode(settings) -> int:
    return (Path(settings.index_dir) / "chunks.lance").stat().st_ino


def test_a_stopped_rebuild_keeps_the_old_index_and_the_next_plain_build_continues_it(
        hash_vault, cli):
    """Stopped part-way through its vectors, a rebuild leaves the old index answering,
    unchanged; the next plain build (cron's) finishes the rebuild: together they encode
    what one whole rebuild encodes, no text twice, then swap in."""
    config, settings = hash_vault
    built = locked_build(settings, encoder=Recording(settings.model))
    old = store.open_for(settings)
    before, old_inode = (old.chunks.count_rows(), old.chunks.version), _inode(settings)
    first = _stop_a_rebuild(settings)
    old = store.open_for(settings)
    assert (old.chunks.count_rows(), old.chunks.version) == before
    found = cli("--config", config, "search", "--json", "rollback release")
    assert found.exit_code == 0 and json.loads(found.stdout)
    assert "chunks embedded" not in found.stderr  # the old index, every row embedded
    said = cli("--config", config, "status")
    assert (f"rebuild stopped with {built.files_seen} files staged; the next `vq build` "
            "continues it") in said.stdout
    assert json.loads(cli("--config", config, "status", "--json").stdout)[
        "stopped_rebuild"] == built.files_seen
    doctor = cli("--config", config, "doctor", "--no-model").stdout
    assert "stopped rebuild" in doctor and f"{built.files_seen} files staged" in doctor

    second = Recording(settings.model)
    resumed = locked_build(settings, encoder=second)
    assert resumed.outcome == "ok" and resumed.rebuilt and resumed.continued_rebuild
    assert resumed.staged_files == resumed.files_unchanged == built.files_seen
    assert not set(first.texts) & set(second.texts), "a staged vector was encoded again"
    assert not (Path(settings.index_dir) / store.STAGE_DIR).exists()
    new = store.open_for(settings)
    assert new.chunks.count_rows(embed.PENDING) == 0
    assert _inode(settings) != old_inode, "the continued stage was not swapped in"
    assert new.builds.count_rows() == 3, "the build history was carried twice, or lost"
    assert "rebuild stopped" not in cli("--config", config, "status").stdout
    assert "stopped rebuild" not in cli("--config", config, "doctor", "--no-model").stdout
    whole = Recording(settings.model)
    assert locked_build(settings, rebuild=True, encoder=whole).continued_rebuild is False
    assert sorted(first.texts + second.texts) == sorted(whole.texts)


def test_a_continued_rebuild_rereads_what_changed_since_and_says_so(hash_vault, cli):
    """The stage's own manifest is what the continuing build reconciles against: a file
    edited after the stop is read again, one deleted leaves the stage, the rest are
    kept; `vq build` says it continued."""
    config, settings = hash_vault
    built = locked_build(settings, encoder=Recording(settings.model))
    _stop_a_rebuild(settings, batches=1)
    notes = sorted(settings.vaults[0].path.rglob("*.md"))
    notes[0].write_text(notes[0].read_text() + "\n## Appendix\n\nan entirely new remark\n")
    notes[1].unlink()
    done = cli("--config", config, "build", "--json")
    assert done.exit_code == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["continued_rebuild"] is True and summary["staged_files"] == built.files_seen
    assert (summary["files_changed"], summary["files_deleted"]) == (1, 1)
    assert summary["files_unchanged"] == built.files_seen - 2
    assert f"continued the stopped rebuild ({built.files_seen} files already staged)" \
        in done.stderr
    index = store.open_for(settings)
    assert index.files.count_rows() == built.files_seen - 1
    assert index.chunks.count_rows("text LIKE '%an entirely new remark%'") == 1
    assert index.chunks.count_rows(embed.PENDING) == 0


def test_a_stopped_rebuild_says_the_next_build_continues_it(hash_vault, cli, monkeypatch):
    """Ctrl-C during `vq build --rebuild`: exit 130, and it says what happens next."""
    import os
    import signal

    config, _ = hash_vault
    assert cli("--config", config, "build").exit_code == 0
    real, calls = HashEncoder.encode, []

    def ctrl_c_once(self, texts, progress=None):
        calls.append(len(texts))
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return real(self, texts, progress)

    monkeypatch.setattr(HashEncoder, "encode", ctrl_c_once)
    stopped = cli("--config", config, "build", "--rebuild")
    assert stopped.exit_code == 130, stopped.stderr
    assert "rebuild stopped: the next `vq build` continues it" in stopped.stderr
    assert (Path(config).parent / "index" / store.STAGE_DIR).is_dir()
    again = cli("--config", config, "build", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["continued_rebuild"] is True


@pytest.mark.parametrize("change", ["model", "chunker"])
def test_a_stage_made_for_other_tables_is_removed_not_continued(hash_vault, monkeypatch,
                                                                change):
    """A stage of another model (a `--rebuild` for a model the config no longer names) or
    of another chunker version is not what this build would create: it is removed, and
    the build goes on from the old index (or, for a new chunker, rebuilds from nothing)."""
    from vq.indexer import build as build_module

    _, settings = hash_vault
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    first = _stop_a_rebuild(settings, model="vq-test/hash-256" if change == "model" else None)
    if change == "chunker":
        monkeypatch.setattr(build_module, "CHUNKER_VERSION", build_module.CHUNKER_VERSION + 1)
    after = Recording(settings.model)
    summary = locked_build(settings, encoder=after)
    assert summary.outcome == "ok" and not summary.continued_rebuild
    assert not (Path(settings.index_dir) / store.STAGE_DIR).exists()
    index = store.open_for(settings)
    assert index.meta.model == settings.model and index.meta.dim == 384
    if change == "model":  # the old index is current: nothing to do
        assert not summary.rebuilt and not after.texts
    else:  # a new chunker: the automatic rebuild, every text encoded again
        assert summary.rebuilt and index.meta.chunker_version == build_module.CHUNKER_VERSION
        assert set(first.texts) <= set(after.texts)


def test_a_chunk_waiting_for_its_vectors_ranks_by_its_words(hash_vault):
    """During tldr's first build (460 of 10,686 chunks embedded), "extract a tar archive"
    ranked build scripts first and tar.md nowhere: a chunk without vectors was fused as
    if every vector signal had missed it. It is now scored as if they agreed with BM25,
    so the best text match of the query is the first hit, embedded or not."""
    from vq.query.search import Query, search

    _, settings = hash_vault
    first = Recording(settings.model)
    assert locked_build(settings, encoder=first,
                        should_stop=lambda: first.batches >= 2).outcome == "interrupted"
    waiting = store.open_for(settings).chunks.search().where(embed.PENDING) \
        .select(["path", "start_line", "text"]).limit(50).to_arrow().to_pylist()
    for row in waiting:  # a query whose best text match is waiting for its vectors
        text = " ".join(dict.fromkeys(row["text"].split()))
        lexical = search(settings, Query(text, method="lexical", limit=1)).hits[0]
        if (lexical.path, lexical.start_line) == (row["path"], row["start_line"]):
            break
    else:
        pytest.fail("no waiting chunk is its own best text match")
    hit = search(settings, Query(text, limit=10)).hits[0]
    assert (hit.path, hit.start_line) == (row["path"], row["start_line"])
    assert hit.signals["vectors"] == {"pending": True} and hit.score == pytest.approx(1.0)
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    done = search(settings, Query(text, limit=10)).hits
    assert all("vectors" not in h.signals for h in done)  # every row embedded: as fused
