"""Score code retrieval against a judged set whose targets are Python definitions.

The shared ``score.py`` judges a hit by a Markdown heading's section, which code
does not have. Here a query names one target definition by file path and
dotted symbol (``"path": "pkg/mod.py", "symbol": "Class.method"``), resolved
at run time with ``ast`` to the line of its ``def``/``class`` keyword: an
exact qualified name first, else the one definition whose qualified name ends
with ``.symbol`` (a method of a class built inside a function is found as
``Class.method``). A hit is relevant when its path matches the target's (the
same trailing-components rule as ``score.py``) and its ``[start_line,
end_line]`` contains that line: the chunk that holds the definition's head,
not one that only calls it, nor a later piece of a long body (``any_piece``
also reports the looser view where any chunk overlapping the definition counts).

Metrics and their output are score.py's: the first relevant hit of the first
10 counts (recall@1/5/10, MRR@10, nDCG@10 = 1/log2(rank+1)), with a
``by_style`` breakdown, so ``bench.report`` renders both alike.

    python -m bench.code_score --corpus DIR --queries Q.jsonl (--results R.jsonl | --check)
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import sys
from pathlib import Path

K = 10
REQUIRED = ("id", "q", "path", "symbol", "style")
METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")


def definitions(source: str) -> list[tuple[str, int, int]]:
    """(dotted qualified name, line of the def/class keyword, last line) of every definition."""
    out: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                out.append((name, child.lineno, child.end_lineno or child.lineno))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return out


def resolve(root: Path, rel: str, symbol: str) -> tuple[tuple[int, int] | None, str | None]:
    """((def line, last line), None) or (None, the problem)."""
    path = root / rel
    if not path.is_file():
        return None, f"no such file in corpus: {rel}"
    defs = definitions(path.read_text(encoding="utf-8"))
    exact = [(line, end) for name, line, end in defs if name == symbol]
    found = exact or [(line, end) for name, line, end in defs if name.endswith("." + symbol)]
    if len(found) != 1:
        return None, f"symbol {symbol!r} found {len(found)} times in {rel}"
    return found[0], None


def load_queries(root: Path, path: Path) -> tuple[list[dict], list[str]]:
    queries, problems, seen = [], [], set()
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        q = json.loads(line)
        missing = [k for k in REQUIRED if not isinstance(q.get(k), str) or not q[k].strip()]
        if missing or q["id"] in seen:
            problems.append(f"{path}:{no}: missing {missing} or duplicate id")
            continue
        seen.add(q["id"])
        span, problem = resolve(root, q["path"], q["symbol"])
        if span is None:
            problems.append(f"{path}:{no} ({q['id']}): {problem}")
            continue
        queries.append({**q, "line": span[0], "end": span[1]})
    return queries, problems


def _components(path: str) -> list[str]:
    return [c for c in path.replace("\\", "/").split("/") if c not in ("", ".")]


def path_matches(hit: str, target: str, root: Path) -> bool:
    p = Path(hit)
    if p.is_absolute():
        with contextlib.suppress(ValueError):
            hit = str(p.resolve().relative_to(root.resolve()))
    have, want = _components(hit), _components(target)
    return len(have) >= len(want) and have[len(have) - len(want):] == want


def first_relevant_rank(query: dict, hits: list[dict], root: Path, any_piece: bool = False
                        ) -> int | None:
    """The judged rule: the hit holds the def line. ``any_piece``: it overlaps the whole
    definition (a later piece of a long function counts too), a looser view."""
    last = query["end"] if any_piece else query["line"]
    for rank, hit in enumerate(hits[:K], 1):
        if (hit["start_line"] <= last and hit["end_line"] >= query["line"]
                and path_matches(hit["path"], query["path"], root)):
            return rank
    return None


def summarise(ranks: list[int | None]) -> dict:
    n = len(ranks)
    found = [r for r in ranks if r is not None]
    if not n:
        return dict.fromkeys(METRICS, 0.0) | {"n": 0}
    return {"n": n,
            "recall@1": sum(r <= 1 for r in found) / n,
            "recall@5": sum(r <= 5 for r in found) / n,
            "recall@10": len(found) / n,
            "mrr@10": sum(1 / r for r in found) / n,
            "ndcg@10": sum(1 / math.log2(r + 1) for r in found) / n}


def score(root: Path, queries: list[dict], results: dict[str, list[dict]]) -> dict:
    """score.py's report shape: overall metrics, ``missing``, ``by_style``, plus ``ranks``
    and the looser ``any_piece`` metrics."""
    ranks = {q["id"]: first_relevant_rank(q, results.get(q["id"], []), root) for q in queries}
    styles = list(dict.fromkeys(q["style"] for q in queries))
    report = summarise(list(ranks.values()))
    report["missing"] = sum(q["id"] not in results for q in queries)
    report["by_style"] = {s: summarise([ranks[q["id"]] for q in queries if q["style"] == s])
                          for s in styles}
    report["ranks"] = ranks
    report["any_piece"] = summarise([first_relevant_rank(q, results.get(q["id"], []), root,
                                                         any_piece=True) for q in queries])
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--results", type=Path)
    ap.add_argument("--check", action="store_true", help="only resolve every target")
    args = ap.parse_args(argv)
    queries, problems = load_queries(args.corpus, args.queries)
    for p in problems:
        print("problem: " + p, file=sys.stderr)
    if problems:
        return 1
    if args.check or not args.results:
        print(f"ok: {len(queries)} queries, {len({q['path'] for q in queries})} files")
        return 0
    rows = [json.loads(x) for x in args.results.read_text(encoding="utf-8").splitlines() if x]
    print(json.dumps(score(args.corpus, queries, {r["id"]: r["hits"] for r in rows})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
