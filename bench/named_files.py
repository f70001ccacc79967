"""Navigational queries: does a query that is a file's name find that file?

The set is built mechanically from each index, never written by hand: every prose
file's title, and its stem where that reads differently, is a query; every code file's
name with its extension is one. A query's relevant files are all files it names (two
pages may share a title). Each query runs through ``vq.query.search.search`` (hybrid,
ten hits) and the rank of the first hit from a relevant file is kept; the table gives
R@10 and MRR@10 per corpus (docs/decisions.md#named-files).

    python -m bench.named_files CONFIG... [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import log, prepare_env, save_json, settings_for
from vq.query.named_files import plain


def queries(rows: list[dict]) -> dict[str, set[tuple[str, str]]]:
    """query text -> the (vault, path) files it names, from an index's chunk rows."""
    named: dict[str, set[tuple[str, str]]] = defaultdict(set)
    texts: dict[str, str] = {}
    for row in rows:
        key = (row["vault"], row["path"])
        name = row["path"].rsplit("/", 1)[-1]
        forms = [name] if row["kind"] == "code" else [row["title"] or "", name.rsplit(".", 1)[0]]
        for form in forms:
            if plain(form):
                texts.setdefault(plain(form), form)
                named[plain(form)].add(key)
    return {texts[k]: files for k, files in named.items()}


def measure(config: Path) -> dict[str, Any]:
    from vq.core.store import open_for
    from vq.query.search import Query, search
    from vq.query.sources import LanceSources

    settings = settings_for(config)
    sources = LanceSources(open_for(settings))
    rows = sources.index.chunks.search().select(["vault", "path", "title", "kind"]) \
        .limit(None).to_arrow().to_pylist()
    ranks: dict[str, int | None] = {}
    for text, files in sorted(queries(rows).items()):
        hits = search(settings, Query(text, "hybrid", limit=10), sources).hits
        ranks[text] = next((r for r, h in enumerate(hits, 1) if (h.vault, h.path) in files),
                           None)
    found = [r for r in ranks.values() if r]
    return {"queries": len(ranks), "recall@10": round(len(found) / len(ranks), 3),
            "mrr@10": round(sum(1 / r for r in found) / len(ranks), 3), "ranks": ranks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    prepare_env()
    results = {}
    for config in args.configs:
        log(f"named files: {config}")
        results[str(config)] = measure(config)
    print("| corpus | queries | R@10 | MRR@10 |\n|---|---|---|---|")
    for config, r in results.items():
        print(f"| {config} | {r['queries']} | {r['recall@10']:.3f} | {r['mrr@10']:.3f} |")
    if args.json:
        save_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
