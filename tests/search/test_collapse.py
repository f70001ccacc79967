"""One hit per place and the per-file cap, on hand-made rows: no index, no model."""

from __future__ import annotations

from vq.query import collapse


def row(doc_id, path, symbol="", kind="code", breadcrumb=None):
    crumb = breadcrumb if breadcrumb is not None else " :: ".join(filter(None, (path, symbol)))
    return {"id": doc_id, "vault": "v", "path": path, "kind": kind, "symbol": symbol,
            "breadcrumb": crumb, "_signals": {}, "_score": 1.0}


def table(*rows):
    return {r["id"]: r for r in rows}


def test_pieces_of_one_definition_are_one_hit_other_code_stays_apart():
    rows = table(row("f2", "a.py", "f"), row("g", "a.py", "g"), row("f1", "a.py", "f"),
                 row("imports", "a.py"), row("main", "a.py"),
                 row("s2", "n.md", kind="notes", breadcrumb="N > Setup"),
                 row("s1", "n.md", kind="notes", breadcrumb="N > Setup"))
    got = collapse.one_per_place(["f2", "g", "f1", "imports", "main", "s2", "s1"], rows)
    assert got == ["f2", "g", "imports", "main", "s2"]


def test_a_files_code_hits_past_the_cap_go_below_every_other_hit_in_order():
    rows = table(*(row(f"a{n}", "a.py", f"f{n}") for n in range(5)),
                 row("b", "b.py", "h"), row("doc", "a.md", kind="docs", breadcrumb="A"))
    order = ["a0", "a1", "a2", "a3", "b", "a4", "doc"]
    assert collapse.cap_per_file(order, rows, 2) == ["a0", "a1", "b", "doc", "a2", "a3", "a4"]
    assert rows["a2"]["_signals"]["code"] == {"capped": 1.0}
    assert collapse.cap_per_file(order, rows, 0) == order


def test_notes_from_one_file_are_never_capped():
    rows = table(*(row(f"s{n}", "a.md", kind="notes", breadcrumb=f"A > {n}") for n in range(5)))
    order = [f"s{n}" for n in range(5)]
    assert collapse.cap_per_file(order, rows, 1) == order
