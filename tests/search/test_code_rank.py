"""The code-ranking rules on hand-made rows: no index, no model."""

from __future__ import annotations

from vq.query import code_rank


def rows(*specs):
    """(id, path, symbol, score) -> the fused order and the rows ``adjust`` reads."""
    return [s[0] for s in specs], {
        doc_id: {"kind": "code", "path": path, "symbol": symbol, "_score": score,
                 "_signals": {}} for doc_id, path, symbol, score in specs}


def test_a_files_later_chunks_keep_their_score_as_shipped():
    order, table = rows(("a1", "a.py", "f", 0.9), ("a2", "a.py", "g", 0.8),
                        ("b1", "b.py", "h", 0.7))
    assert code_rank.SATURATION == 1.0  # measured off on the jsonschema code set
    assert code_rank.adjust(order, table, "what does it do", []) == ["a1", "a2", "b1"]
    assert table["a2"]["_score"] == 0.8 and "code" not in table["a2"]["_signals"]


def test_saturation_below_one_still_pushes_a_files_later_chunks_down(monkeypatch):
    monkeypatch.setattr(code_rank, "SATURATION", 0.7)
    order, table = rows(("a1", "a.py", "f", 0.9), ("a2", "a.py", "g", 0.8),
                        ("b1", "b.py", "h", 0.7))
    assert code_rank.adjust(order, table, "what does it do", []) == ["a1", "b1", "a2"]
    assert table["a2"]["_signals"]["code"] == {"saturation": 0.7}


def test_tests_are_halved_and_a_named_definition_goes_first():
    order, table = rows(("t", "tests/test_a.py", "test_f", 0.9), ("m", "a.py", "g", 0.6),
                        ("d", "b.py", "parse_config", 0.1))
    got = code_rank.adjust(order, table, "parse_config", ["parse_config"])
    assert got == ["d", "m", "t"]
    assert table["t"]["_score"] == 0.9 * code_rank.SECONDARY
