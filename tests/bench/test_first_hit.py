"""bench.first_hit's judge on tiny inputs: a docs hit counts by its section (the shared
score.py), a code hit by the target's def line (bench.code_score)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import first_hit, quality  # noqa: E402
from bench.common import eval_dir  # noqa: E402


def hit(path, start, end):
    return SimpleNamespace(path=path, start_line=start, end_line=end)


def write(root: Path, files: dict[str, str], query: dict) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    queries = root.parent / "queries.jsonl"
    queries.write_text(json.dumps(query) + "\n", encoding="utf-8")
    return queries


@pytest.mark.skipif(not (eval_dir() / "score.py").is_file(), reason="no shared score.py")
def test_a_docs_hit_counts_when_it_overlaps_the_target_section(tmp_path):
    root = tmp_path / "corpus"
    queries = write(root, {"a.md": "# A\n\n## Install\n\ntext\n\n## Use\n\nmore\n"},
                    {"id": "q1", "q": "install", "path": "a.md", "heading": "Install",
                     "style": "keyword"})
    judge = first_hit.Judge(quality.Corpus("d", root, queries, "d"))
    assert judge.rank("q1", [hit("a.md", 7, 9), hit("a.md", 3, 4)]) == 2
    assert judge.rank("q1", [hit("b.md", 3, 4)]) is None


def test_a_code_hit_counts_only_when_it_holds_the_def_line(tmp_path):
    root = tmp_path / "corpus"
    source = "import os\n\n\ndef f(x):\n    y = x\n    return y\n"
    queries = write(root, {"pkg/mod.py": source},
                    {"id": "c1", "q": "f", "path": "pkg/mod.py", "symbol": "f",
                     "style": "symbol"})
    judge = first_hit.Judge(quality.Corpus("c", root, queries, "c", kind="code"))
    assert judge.rank("c1", [hit("pkg/mod.py", 5, 6), hit("pkg/mod.py", 4, 6)]) == 2


@pytest.mark.skipif(not (eval_dir() / "score.py").is_file(), reason="no shared score.py")
def test_a_mixed_set_judges_each_query_by_its_own_target_and_absolute_paths(tmp_path):
    root = tmp_path / "corpus"
    files = {"docs/a.md": "# A\n\n## Install\n\ntext\n",
             "pkg/mod.py": "import os\n\n\ndef f(x):\n    return x\n"}
    queries = write(root, files, {"id": "q1", "q": "install", "path": "docs/a.md",
                                  "heading": "Install", "style": "keyword"})
    with queries.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"id": "c1", "q": "f", "path": "pkg/mod.py", "symbol": "f",
                              "style": "symbol"}) + "\n")
    judge = first_hit.Judge(quality.Corpus("m", root, queries, "m"))
    docs_hit = SimpleNamespace(path="a.md", abs_path=str(root / "docs/a.md"),
                               start_line=3, end_line=5)
    code_hit = SimpleNamespace(path="pkg/mod.py", abs_path=str(root / "pkg/mod.py"),
                               start_line=4, end_line=5)
    assert judge.rank("q1", [code_hit, docs_hit]) == 2
    assert judge.rank("c1", [docs_hit, code_hit]) == 2
    assert judge.rank("c1", [docs_hit]) is None


def test_the_record_unit_folds_a_short_prose_file_and_spans_it_whole(tmp_path):
    """Sections of a short prose file become one hit at its best section's rank; a
    long file's sections and code stay as they are (docs/decisions.md#record-hits)."""
    from vq.query.search import Hit

    short = tmp_path / "adr.md"
    short.write_text("# ADR\n\n## Context\n\nwhy\n\n## Decision\n\nwhat\n", encoding="utf-8")
    long = tmp_path / "long.md"
    long.write_text("# L\n\n" + "words " * 1000 + "\n\n## B\n\nmore\n", encoding="utf-8")
    code = tmp_path / "m.py"
    code.write_text("def f():\n    pass\n\n\ndef g():\n    pass\n", encoding="utf-8")

    def h(path, start, end, kind="docs"):
        return Hit(id="", vault="v", path=path.name, abs_path=str(path), start_line=start,
                   end_line=end, breadcrumb="", kind=kind, text="")
    hits = [h(short, 7, 9), h(long, 1, 3), h(short, 3, 5), h(long, 5, 7),
            h(code, 1, 2, "code"), h(code, 5, 6, "code")]
    record = first_hit.UNITS["record"](hits)
    assert [(x.path, x.start_line, x.end_line) for x in record] == [
        ("adr.md", 1, 9), ("long.md", 1, 3), ("long.md", 5, 7), ("m.py", 1, 2), ("m.py", 5, 6)]
    anchor = first_hit.UNITS["record-anchor"](hits)
    assert [(x.path, x.start_line) for x in anchor][:2] == [("adr.md", 7), ("long.md", 1)]
