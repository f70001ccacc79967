"""`vq init`'s size estimate against the count it predicts, on a real tree.

The estimate chunks a seeded sample of each proposed vault and scales chunks per
byte (``vq.indexer.estimate``); the baseline here chunks every file the same way
(the build's chunkers and window fit, no encode), so the error is the sample's
alone. Nothing is asserted: the figures are for docs/init-doctor.md.

    python -m bench.init_estimate PATH [PATH ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from vq.core.settings import Settings, Vault
from vq.core.walk import discover_for
from vq.indexer.engine import FileWork, chunk_files, limits_for
from vq.indexer.estimate import size_plan
from vq.indexer.extract_cache import FileChunker
from vq.indexer.fit_window import fitter
from vq.indexer.project import inspect_project


def measure(root: Path) -> dict[str, Any]:
    """Estimate vs every file chunked, with the seconds each took."""
    settings = Settings(index_dir=str(root / ".vq-bench-unused"), device="cpu")
    started = time.perf_counter()
    plan = inspect_project(root)
    estimate = size_plan(plan, settings)
    estimate_s = time.perf_counter() - started
    vaults = tuple(Vault(v.id, (plan.root / v.path).resolve(), v.include, v.exclude, v.kind)
                   for v in plan.vaults)
    full = replace(settings, vaults=vaults)
    found = discover_for(full)
    started = time.perf_counter()
    pending, _ = chunk_files(FileChunker(full, limits_for(full)),
                             {v.id: v.kind for v in vaults},
                             [FileWork(e, None) for e in found.files], fit=fitter(full.model))
    sections = {p.section_hash for p in pending if p.section_text is not None}
    texts = len(pending) + len(sections)
    return {"root": str(root), "files": len(found.files),
            "estimate": {"chunks": estimate.chunks, "texts": estimate.texts,
                         "seconds": round(estimate_s, 1)},
            "actual": {"chunks": len(pending), "texts": texts,
                       "seconds": round(time.perf_counter() - started, 1)},
            "chunks_error": round((estimate.chunks - len(pending)) / max(len(pending), 1), 4),
            "texts_error": round((estimate.texts - texts) / max(texts, 1), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = [measure(root.resolve()) for root in args.roots]
    for r in rows:
        print(f"{r['root']}: {r['files']} files; estimate {r['estimate']['chunks']} chunks "
              f"({r['estimate']['seconds']}s), chunked {r['actual']['chunks']} "
              f"({r['actual']['seconds']}s): {r['chunks_error']:+.1%} chunks, "
              f"{r['texts_error']:+.1%} texts")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
