"""A query that is a note's name (its title, stem or file name) finds that note: the rule
on hand-made rows, then through a real build and search (docs/decisions.md#named-files)."""

from __future__ import annotations

from tests.conftest import build_and_search
from vq.query import named_files
from vq.query.code_rank import DEFINES


def rows(*specs):
    """(id, path, title, kind, score) -> the fused order and the rows ``adjust`` reads."""
    return [s[0] for s in specs], {
        doc_id: {"vault": "v", "path": path, "title": title, "kind": kind, "_score": score,
                 "_signals": {}} for doc_id, path, title, kind, score in specs}


def test_the_best_chunk_of_a_note_named_by_its_title_counts_double():
    order, table = rows(("r", "Release notes/v1.4.md", "1.4", "notes", 0.9),
                        ("p1", "Editing/Properties.md", "Properties", "notes", 0.6),
                        ("p2", "Editing/Properties.md", "Properties", "notes", 0.5))
    assert named_files.adjust(order, table, "properties") == ["p1", "r", "p2"]
    assert table["p1"]["_score"] == 0.6 * DEFINES
    assert table["p1"]["_signals"]["named"] == {"factor": DEFINES}
    assert table["p2"]["_score"] == 0.5  # one hit per named file rises, not the whole file


def test_a_note_is_named_by_its_stem_or_file_name_spelt_any_way():
    for query in ("Embed files", "embed-files", "EMBED_FILES", "  embed   files ",
                  "Embed files.md"):
        order, table = rows(("o", "a.md", "Other", "notes", 0.9),
                            ("e", "Linking/Embed files.md", "Embedding", "notes", 0.5))
        assert named_files.adjust(order, table, query) == ["e", "o"], query


def test_a_code_file_is_named_by_its_file_name_only():
    """A code file's bare stem ("search") is a word of many queries and a symbol's name;
    "search.py" names the file."""
    order, table = rows(("o", "a.md", "Search", "notes", 0.9),
                        ("c", "query/search.py", "", "code", 0.5))
    assert named_files.adjust(order, table, "search.py") == ["c", "o"]
    order, table = rows(("o", "a.md", "Other", "notes", 0.9),
                        ("c", "query/search.py", "search", "code", 0.5))
    assert named_files.adjust(order, table, "search") == ["o", "c"]


def test_a_question_or_a_partial_name_names_nothing():
    for query in ("what do properties do", "propert", "x" * 300):
        order, table = rows(("o", "a.md", "Other", "notes", 0.9),
                            ("p", "Properties.md", "Properties", "notes", 0.5))
        assert named_files.adjust(order, table, query) == ["o", "p"], query


def test_a_named_note_no_signal_scored_stays_below_every_scored_hit():
    order, table = rows(("o", "a.md", "Other", "notes", 0.01),
                        ("p", "Properties.md", "Properties", "notes", 0.0))
    assert named_files.adjust(order, table, "Properties") == ["o", "p"]


def test_a_search_for_a_notes_title_finds_that_note_first(tmp_path, build, cli):
    """Obsidian's help: "Canvas" ranked release notes that mention canvases above the
    Canvas page, whose own words are about boards and cards."""
    files = {"Plugins/Canvas.md": "# Canvas\n\nLay out notes, cards and media on an "
                                  "infinite board, and connect them with lines.\n",
             **{f"Release notes/v1.{n}.md": f"# 1.{n}\n\n## Improvements\n\nThe canvas "
                f"view opens faster, and search finds more (change {n}).\n" for n in range(6)}}
    hits = build_and_search(tmp_path, build, cli, files, "notes", "Canvas", "-n", "3")
    assert hits[0]["path"] == "Plugins/Canvas.md", [h["path"] for h in hits]
    assert hits[0]["signals"]["named"] == {"factor": DEFINES}
    assert all("named" not in h["signals"] for h in hits[1:])
