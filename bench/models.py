"""The dev sets with another embedding model: is the dense signal the lever?

Builds the Docker, Node.js dev and contributor-guide sets with ``--model`` (a
path or a name ``vq`` can load; chunks sized to that model's window, as a
real build does) and scores dense, lexical and the shipped hybrid fusion with
the shared scorer. Nothing is chosen here; it is a measurement, for example of
whether a stronger model than the bundled all-MiniLM-L6-v2 would carry hybrid
over a goal, and what it costs (build seconds are logged).

    python -m bench.models --model PATH [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bench import common, quality
from bench import fusion as fusion_bench
from vq.query import fusion


def variants() -> list[tuple[str, Any]]:
    return [("lexical", lambda e: fusion.ranked(e["bm25"])),
            ("dense", lambda e: fusion.ranked(e["dense"])),
            ("hybrid (shipped fusion)",
             lambda e: fusion_bench.default_order(e["bm25"], e["dense"]))]


def corpora(work: Path) -> list[quality.Corpus | None]:
    return [*fusion_bench.dev_corpora(work), quality.contributing_corpus(work)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--model", required=True)
    known, rest = ap.parse_known_args(argv)
    common.MODEL = known.model  # write_config reads it per build
    return fusion_bench.variant_main(rest, __doc__, "models", variants(),
                                     choose=lambda s: {"model": known.model},
                                     corpora=corpora)


if __name__ == "__main__":
    sys.exit(main())
