"""The code set's scorer and the rule switches of bench.code_rank, on tiny inputs."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import code_rank, code_score, report  # noqa: E402
from vq.query import code_rank as rules  # noqa: E402
from vq.query import collapse  # noqa: E402

SOURCE = '''\
import functools


def create():
    class Validator:
        @functools.cache
        def iter_errors(self):
            return []
    return Validator


def validate():
    pass


class Other:
    def validate(self):
        pass
'''


def corpus(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path


def test_symbols_resolve_to_their_def_line_exact_name_first(tmp_path):
    root = corpus(tmp_path)
    assert code_score.resolve(root, "pkg/mod.py", "Validator.iter_errors") == ((7, 8), None)
    assert code_score.resolve(root, "pkg/mod.py", "validate") == ((12, 13), None)  # not Other's
    assert code_score.resolve(root, "pkg/mod.py", "Other.validate") == ((17, 18), None)
    assert code_score.resolve(root, "pkg/mod.py", "missing")[1]
    assert code_score.resolve(root, "pkg/gone.py", "x")[1]


def test_a_hit_counts_when_its_span_holds_the_def_line(tmp_path):
    root = corpus(tmp_path)
    q = {"id": "q", "q": "x", "path": "pkg/mod.py", "symbol": "validate", "style": "symbol"}
    (root / "q.jsonl").write_text(json.dumps(q) + "\n", encoding="utf-8")
    queries, problems = code_score.load_queries(root, root / "q.jsonl")
    assert not problems
    hits = [{"path": "pkg/mod.py", "start_line": 13, "end_line": 14},  # body only
            {"path": "other/mod.py", "start_line": 1, "end_line": 20},  # wrong file
            {"path": str(root / "pkg" / "mod.py"), "start_line": 10, "end_line": 13}]
    got = code_score.score(root, queries, {"q": hits})
    assert got["ranks"] == {"q": 3}
    assert math.isclose(got["ndcg@10"], 1 / math.log2(4))
    assert got["by_style"]["symbol"]["mrr@10"] == 1 / 3
    assert got["any_piece"]["mrr@10"] == 1.0  # the body-only piece counts in the loose view


def test_the_shipped_set_is_well_formed():
    lines = (code_rank.DEVSET / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(x) for x in lines]
    assert len(queries) == len({q["id"] for q in queries}) == 40
    files = set((code_rank.DEVSET / "files.txt").read_text(encoding="utf-8").split())
    assert {q["path"] for q in queries} <= files
    asks = [q for q in queries if q["style"] == "tests"]
    assert asks and all("/tests/" in q["path"] for q in asks)


def test_rules_off_switches_each_rule_and_restores_it():
    shipped = rules.symbol_terms, rules.secondary, collapse.cap_per_file
    rows = {i: {"kind": "code", "vault": "v", "path": "a.py", "_signals": {}} for i in "abc"}
    with code_rank.rules_off(code_rank.RULES):
        assert rules.symbol_terms("parse_config") == []
        assert not rules.secondary("tests/test_a.py", "parse")
        assert collapse.cap_per_file(["a", "b", "c"], rows, 1) == ["a", "b", "c"]
        assert "capped" not in rows["b"]["_signals"].get("code", {})
    with code_rank.rules_off(("secondary",), cap=2):
        assert rules.symbol_terms("parse_config") == ["parse_config"]
        assert collapse.cap_per_file(["a", "b", "c"], rows, 5) == ["a", "b", "c"]
        assert rows["c"]["_signals"]["code"] == {"capped": 1.0}
    assert (rules.symbol_terms, rules.secondary, collapse.cap_per_file) == shipped


def test_report_shows_each_rules_delta_and_moved_queries():
    def run(off, ranks):
        m = code_score.score(Path("."), [], {})
        ndcg = sum(1 / math.log2(r + 1) for r in ranks.values() if r) / len(ranks)
        return {**m, "ndcg@10": ndcg, "mrr@10": ndcg, "ranks": ranks, "off": off,
                "ms_per_query": 1.0, "by_style": {}, "any_piece": {"ndcg@10": ndcg}}
    methods = {"hybrid": run([], {"a": 1, "b": 2}),
               "hybrid − secondary": run(["secondary"], {"a": 3, "b": 2})}
    md = report.code_rank_markdown({"code": {
        "corpus": "jsonschema", "label": "x", "chunks": 1, "build_seconds": 1.0,
        "chunks_encoded": 1, "methods": methods}})
    assert "hybrid − secondary" in md and "a 1→3" in md and "-0.2500" in md
