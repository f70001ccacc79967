"""Full-text tokenizer settings compared on the Docker eval: a method comparison.

    python -m bench.fts_variants [--work DIR]

Builds the eval corpus once (as ``bench.quality`` does), then for each FTS
tokenizer variant recreates only the full-text index (vectors untouched) and
scores lexical and hybrid search with the shared scorer. Every variant is
reported; none is picked per query. The default is LanceDB's (English stemming,
stop words removed, ASCII folding, lower case).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench import quality
from bench.common import prepare_env, scratch
from bench.report import table

VARIANTS: dict[str, dict] = {
    "default: stem, drop stop words": {},
    "stem, keep stop words": {"remove_stop_words": False},
    "no stem, drop stop words": {"stem": False},
    "no stem, keep stop words": {"stem": False, "remove_stop_words": False},
}
METHODS = (("lexical", ("-m", "lexical")), ("hybrid", ("-m", "hybrid")))
METRICS = ("recall@1", "recall@10", "mrr@10", "ndcg@10")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--nodejs-files", type=int, default=8,
                    help="Node.js API docs files for the regression corpus (0: skip it)")
    args = ap.parse_args(argv)
    prepare_env()
    work = scratch(args.work, "fts")
    corpora = [quality.docker_corpus()]
    if args.nodejs_files:
        corpora.append(quality.nodejs_corpus(work, files=args.nodejs_files, queries=60))
    rows = []
    for corpus in filter(None, corpora):
        rows += compare(corpus, work)
    if not rows:
        print("no eval corpus found: nothing to compare", file=sys.stderr)
        return 0
    print(table(["corpus", "FTS tokenizer", "method", *METRICS, "task nDCG@10"], rows))
    return 0


def compare(corpus: quality.Corpus, work: Path) -> list[list]:
    """One row per variant and method; only the FTS index is rebuilt between variants."""
    from lancedb.index import FTS

    config, index = quality.build_corpus(corpus, work)
    queries = quality.read_queries(corpus.queries)
    rows = []
    for name, options in VARIANTS.items():
        index.chunks.create_index("text", config=FTS(**options), replace=True)
        for method, flags in METHODS:
            scores = quality.run_vq_method(corpus, config, flags, queries, work / corpus.name)
            task = scores.get("by_style", {}).get("task", {}).get("ndcg@10")
            rows.append([corpus.name, name, method, *(round(scores[m], 3) for m in METRICS),
                         "–" if task is None else round(task, 3)])
    return rows


if __name__ == "__main__":
    sys.exit(main())
