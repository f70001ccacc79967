"""Documents: PDF pages, HTML breadcrumbs, preprocessing hooks, the extraction cache."""

from __future__ import annotations

import io
import json
import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_config, write_tree
from tests.index.test_chunk_properties import assert_invariants
from vq.core import store
from vq.core.errors import ConfigError
from vq.core.settings import load_settings
from vq.core.walk import SizeCap, discover
from vq.indexer.extract_cache import CACHE_DIR, ExtractCache, Extracted, FileChunker
from vq.indexer.handlers import HandlerError, Limits, handler_for
from vq.indexer.handlers.html import extract_html, html_handler
from vq.indexer.handlers.pdf import PAGE_BREAK, pdf_handler
from vq.indexer.hooks import HookFailed, hook_name, hook_text, run_hook

PAGES = [
    ["Field manual", "", "Keep the generator fuelled before every night shift."],
    ["Chapter two covers water.", "Boil river water for one minute before drinking it.",
     "", "Store it in sealed jerrycans away from sunlight."],
    ["Section 2.1: ropes", "A bowline knot makes a fixed loop that will not slip."],
]


def make_pdf(pages: list[list[str]], title: str = "Field manual", outline: bool = True,
             password: str | None = None) -> bytes:
    """A real multi-page PDF with a text layer, written with pypdf alone."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*" if line else "T*")
        stream = DecodedStreamObject()
        stream.set_data("\n".join([*ops, "ET"]).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    writer.add_metadata({"/Title": title})
    if outline:
        writer.add_outline_item(title="Basics", page_number=0)
        chapter = writer.add_outline_item(title="Water", page_number=1)
        writer.add_outline_item(title="Ropes", page_number=2, parent=chapter)
    if password:
        writer.encrypt(user_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def extracted_lines(pages: list[str]) -> list[str]:
    """The lines chunk line numbers count: pages joined by a form-feed line."""
    return f"\n{PAGE_BREAK}\n".join(p.rstrip("\n") for p in pages).split("\n")


def test_pdf_chunks_stay_within_pages_with_page_numbers_and_outline() -> None:
    from pypdf import PdfReader

    data = make_pdf(PAGES)
    document = pdf_handler(data, "docs/manual.pdf", Limits(max_chars=60))
    assert document.title == "Field manual"
    pages = [p.extract_text() for p in PdfReader(io.BytesIO(data)).pages]
    lines = extracted_lines(pages)
    assert_invariants("\n".join(lines), document)
    for chunk in document.chunks:
        assert PAGE_BREAK not in chunk.text  # never spans a page break
        assert chunk.text in pages[chunk.page - 1]
    assert {c.page for c in document.chunks} == {1, 2, 3}
    by_page = {c.page: c.breadcrumb for c in document.chunks}
    assert by_page == {1: "Field manual > Basics", 2: "Field manual > Water",
                       3: "Field manual > Water > Ropes"}
    assert len([c for c in document.chunks if c.page == 2]) > 1  # split inside the page


def test_pdf_without_outline_or_title_uses_the_file_stem() -> None:
    document = pdf_handler(make_pdf(PAGES[:1], title="", outline=False), "a/b/notes.pdf",
                           Limits())
    assert [(c.breadcrumb, c.page) for c in document.chunks] == [("notes", 1)]


@pytest.mark.parametrize(("data", "reason"), [
    (b"%PDF-1.4\n1 0 obj <<\ngarbage", "cannot read PDF"),
    (b"", "cannot read PDF"),
    (make_pdf(PAGES, password="secret"), "password"),
    (make_pdf([[], []], outline=False), "no extractable text"),
])
def test_unreadable_pdfs_raise_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(HandlerError, match=reason):
        pdf_handler(data, "x.pdf", Limits())


def test_pdf_encrypted_with_an_empty_user_password_opens() -> None:
    document = pdf_handler(make_pdf(PAGES, password=""), "x.pdf", Limits())
    assert "bowline" in document.chunks[-1].text


PAGE = """<!doctype html>
<html><head><meta charset="iso-8859-1"><title>Caf\xe9 handbook</title>
<style>body { color: red }</style><script>var hidden = "script text";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Opening the caf\xe9</h1>
<p>Unlock the back door<p>Switch on the espresso machine <b>first</b>.
<h2>Cleaning <small>daily</small></h2>
<ul><li>Descale the kettle<li>Wipe the counters</ul>
<div hidden>secret drawer code 1234</div>
<p style="display: none">invisible</p>
<pre>
steam --purge
  --wait 30
</pre>
<table><tr><th>Day<th>Task<tr><td>Mon<td>Order beans</table>
<h2>Closing</h2>
<p># not a heading, just text
</body></html>
"""


def test_html_visible_text_with_headings_as_breadcrumbs() -> None:
    data = PAGE.encode("latin-1")
    title, text = extract_html(data)
    assert title == "Café handbook"
    for gone in ("script text", "color: red", "Home", "secret drawer", "invisible"):
        assert gone not in text
    assert "Switch on the espresso machine first." in text
    assert "- Descale the kettle" in text and "Day | Task\nMon | Order beans" in text
    assert "```\nsteam --purge\n  --wait 30\n```" in text
    document = html_handler(data, "site/cafe.html", Limits())
    assert document.title == "Café handbook"
    crumbs = [c.breadcrumb for c in document.chunks]
    assert crumbs == ["Opening the café", "Opening the café > Cleaning daily",
                      "Opening the café > Closing"]
    assert document.chunks[-1].text.endswith("\\# not a heading, just text")
    assert_invariants(text, document)
    assert handler_for("x/Page.HTM") == ("html", html_handler)


def test_html_survives_deep_nesting_and_empty_pages() -> None:
    deep = "<div>" * 5000 + "deep text" + "</div>" * 5000
    assert "deep text" in extract_html(deep.encode())[1]
    assert html_handler(b"", "empty.html", Limits()).chunks == ()


@pytest.fixture(autouse=True)
def hook_runs_log(tmp_path, monkeypatch):
    """Where TO_MARKDOWN logs its runs: a build hands hooks a private copy of each file,
    so the script cannot find the test's folder from the path it is given."""
    monkeypatch.setenv("HOOK_RUNS_LOG", str(tmp_path / "hook-runs.log"))


def script(tmp_path: Path, name: str, body: str) -> str:
    """A hook command running a tiny Python script: ``python script.py {path}``."""
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))} {{path}}"


TO_MARKDOWN = """\
import os, pathlib, sys
path = pathlib.Path(sys.argv[1])
log = pathlib.Path(os.environ["HOOK_RUNS_LOG"])
with log.open("a") as f:
    f.write(path.name + "\\n")
print("# " + path.stem)
print()
print("## Body")
print()
print(path.read_text().strip())
print()
print("argv count:", len(sys.argv))
"""


def test_hook_gets_the_path_as_one_argument_never_through_a_shell(tmp_path) -> None:
    (tmp_path / "in").mkdir()
    odd = tmp_path / "in" / "q3 $(touch pwned) 'report'.docx"
    odd.write_text("Revenue grew in the third quarter.")
    command = script(tmp_path, "tomd.py", TO_MARKDOWN)
    text = hook_text(command, odd, timeout=30)
    assert "Revenue grew" in text and "argv count: 2" in text
    assert not any(p.name == "pwned" for p in tmp_path.rglob("*"))
    assert hook_name(command).startswith("hook:python")


def test_failing_and_silent_hooks_say_why(tmp_path) -> None:
    target = tmp_path / "a.xlsx"
    target.write_text("x")
    fails = script(tmp_path, "fail.py", "import sys\nsys.stderr.write('bad sheet\\n')\n"
                                        "sys.exit(3)\n")
    with pytest.raises(HookFailed, match=r"exited with status 3: bad sheet"):
        hook_text(fails, target, timeout=30)
    silent = script(tmp_path, "silent.py", "pass\n")
    with pytest.raises(HookFailed, match="printed nothing"):
        hook_text(silent, target, timeout=30)
    run = run_hook("no-such-converter-xyz {path}", target, timeout=30)
    assert run.status is None and "cannot start 'no-such-converter-xyz'" in run.problem


def test_hanging_hook_and_its_children_are_killed_at_the_timeout(tmp_path) -> None:
    target = tmp_path / "a.odt"
    target.write_text("x")
    started = time.monotonic()
    run = run_hook("sh -c 'sleep 30; echo late' sh {path}", target, timeout=0.5)
    assert time.monotonic() - started < 10  # the sleeping grandchild held no pipe open
    assert run.status is None and "timed out after 0.5s" in run.problem


@pytest.mark.parametrize(("hooks", "message"), [
    ({".docx": "pandoc -t gfm"}, "containing {path}"),
    ({"docx": "pandoc {path}"}, "file extension with its dot"),
    ({".docx": "pandoc 'unbalanced {path}"}, "cannot split"),
    (["pandoc {path}"], "expected a mapping"),
])
def test_hook_config_is_validated(tmp_path, hooks, message) -> None:
    cfg = write_config(tmp_path / "c.yaml", {"hooks": hooks})
    with pytest.raises(ConfigError, match=message):
        load_settings(str(cfg))


def test_hook_config_loads(tmp_path) -> None:
    cfg = write_config(tmp_path / "c.yaml", {"hooks": {".DOCX": "pandoc -t gfm {path}"},
                                             "hook_timeout_seconds": 5})
    settings = load_settings(str(cfg))
    assert settings.hooks == {".docx": "pandoc -t gfm {path}"}
    assert settings.hook_timeout_seconds == 5.0
    bad = write_config(tmp_path / "d.yaml", {"hook_timeout_seconds": 0})
    with pytest.raises(ConfigError, match="more than 0"):
        load_settings(str(bad))


def test_discovery_claims_hooked_extensions_and_skips_vendor_in_code(tmp_path) -> None:
    from vq.core.settings import Vault

    write_tree(tmp_path / "v", {"a.docx": "x", "b.odt": "y", "vendor/lib.py": "z",
                                "vendor.md": "w", "tests/thirdparty/doctest.h": "int d;",
                                "3rdparty/zlib.c": "int z;", "ThirdParty/x.cpp": "int x;",
                                "src/pip/_vendor/rich/console.py": "x = 1"})
    vault = Vault("v", tmp_path / "v", kind="code")
    found = discover([vault], SizeCap(10_000, 10_000), frozenset({".docx"}))
    assert sorted(f.path for f in found.files) == ["a.docx", "vendor.md"]
    assert found.skipped["unclaimed"] == 1 and found.skipped["vendored"] == 5
    notes = discover([Vault("v", tmp_path / "v", kind="notes")], SizeCap(10_000, 10_000))
    assert "vendor/lib.py" in [f.path for f in notes.files]


def test_extract_cache_round_trip_and_no_cache_for_object_storage(tmp_path) -> None:
    cache = ExtractCache(tmp_path / CACHE_DIR)
    value = Extracted("T", ("page one", "page two"), ("A", "A > B"), paged=True)
    assert cache.get("abc", "pdf/1") is None
    cache.put("abc", "pdf/1", value)
    assert cache.get("abc", "pdf/1") == value
    assert cache.get("abc", "html/1") is None  # another extractor, another entry
    (next((tmp_path / CACHE_DIR).iterdir())).write_text("{not json")
    assert cache.get("abc", "pdf/1") is None  # a damaged entry is a miss, not an error
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": "s3://bucket/vq"})
    assert FileChunker(load_settings(str(cfg)), Limits()).cache.root is None


def test_a_hook_takes_over_its_extension_even_from_built_in_readers(tmp_path) -> None:
    cfg = write_config(tmp_path / "c.yaml", {"hooks": {".pdf": "pdftotext {path} -"}})
    chunker = FileChunker(load_settings(str(cfg)), Limits())
    assert chunker.claim("docs/Scan.PDF") == ("hook:pdftotext", "pdftotext {path} -")
    assert chunker.claim("page.html") == ("html", html_handler)
    assert chunker.claim("photo.jpg") is None


def test_hooks_check_reports_each_hook(tmp_path, cli) -> None:
    write_tree(tmp_path / "docs", {"a.docx": "Quarterly numbers.", "b.xlsx": "cells"})
    cfg = write_config(tmp_path / "c.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"docs": {"path": str(tmp_path / "docs"), "kind": "docs"}},
        "hooks": {".docx": script(tmp_path, "tomd.py", TO_MARKDOWN),
                  ".xlsx": script(tmp_path, "fail.py", "import sys\nsys.exit(2)\n"),
                  ".odt": "cat {path}"},
    })
    result = cli("--config", cfg, "hooks", "check", "--json")
    assert result.exit_code == 1
    checks = {c["extension"]: c for c in json.loads(result.stdout)}
    assert checks[".docx"]["status"] == "ok" and checks[".docx"]["first_line"] == "# a"
    assert checks[".docx"]["chunks"] == 1 and checks[".docx"]["exit_status"] == 0
    assert checks[".xlsx"]["status"] == "failed" and checks[".xlsx"]["exit_status"] == 2
    assert checks[".odt"]["status"] == "no sample"
    text = cli("--config", cfg, "hooks", "check", "--sample", tmp_path / "docs" / "a.docx")
    assert "✓ .docx" in text.stdout and "✗ .xlsx" in text.stdout
    wrong = cli("--config", cfg, "hooks", "check", "--sample", cfg)
    assert wrong.exit_code == 2 and "no hook is configured for '.yaml'" in wrong.stderr


@pytest.fixture
def docs_settings(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "manual.pdf").write_bytes(make_pdf(PAGES))
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really a pdf")
    (root / "locked.pdf").write_bytes(make_pdf(PAGES, password="secret"))
    (root / "cafe.html").write_bytes(PAGE.encode("latin-1"))
    (root / "sales.docx").write_text("Revenue grew eleven percent in the third quarter.")
    (root / "grid.xlsx").write_text("cells")
    (root / "slow.odt").write_text("never read")
    cfg = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"docs": {"path": str(root), "kind": "docs"}},
        "hooks": {".docx": script(tmp_path, "tomd.py", TO_MARKDOWN),
                  ".xlsx": script(tmp_path, "fail.py", "import sys\nsys.exit(4)\n"),
                  ".odt": "sh -c 'sleep 30' sh {path}"},
        "hook_timeout_seconds": 1,
    })
    return cfg, load_settings(str(cfg))


@pytest.mark.model
def test_documents_build_search_and_cache(docs_settings, build, cli, monkeypatch, tmp_path):
    import vq.indexer.extract_cache as extract_cache

    calls = []  # successful PDF extractions (failures are never cached)
    real = extract_cache.extract_pdf

    def counting(data: bytes, *bounds: int):
        result = real(data, *bounds)
        calls.append(1)
        return result

    monkeypatch.setattr(extract_cache, "extract_pdf", counting)
    cfg, settings = docs_settings
    summary = build(settings)
    assert summary.outcome == "ok" and summary.files_new == 3
    reasons = {p["path"]: p["reason"] for p in summary.problems}
    assert sorted(reasons) == ["broken.pdf", "grid.xlsx", "locked.pdf", "slow.odt"]
    assert "cannot read PDF" in reasons["broken.pdf"] and "password" in reasons["locked.pdf"]
    assert "exited with status 4" in reasons["grid.xlsx"]
    assert "timed out after 1s" in reasons["slow.odt"]
    index = store.open_index(settings.index_dir)
    handlers = dict(zip(*index.files.search().select(["path", "handler"]).limit(None)
                        .to_arrow().to_pydict().values(), strict=True))
    assert handlers["sales.docx"].startswith("hook:python") and handlers["cafe.html"] == "html"

    def search(*args: str) -> list[dict]:
        result = cli("--config", cfg, "search", *args, "--json", "--kind", "docs")
        return json.loads(result.stdout)

    water = search("how do I make river water safe to drink", "-n", "1")[0]
    assert (water["path"], water["page"]) == ("manual.pdf", 2)
    assert water["breadcrumb"] == "Field manual > Water"
    tty = cli("--config", cfg, "search", "bowline knot", "-n", "1")
    assert "docs:manual.pdf#page=3" in tty.stdout
    cafe = search("descale the kettle", "-n", "1")[0]
    assert (cafe["path"], cafe["breadcrumb"]) == ("cafe.html", "Opening the café > Cleaning daily")
    assert search("third quarter revenue", "-n", "1")[0]["path"] == "sales.docx"

    runs = (tmp_path / "hook-runs.log").read_text().split()
    assert (len(calls), runs) == (1, ["sales.docx"])
    again = build(settings, rebuild=True)  # re-chunks everything: extraction comes from cache
    assert again.outcome == "ok" and again.files_new == 3
    assert (len(calls), (tmp_path / "hook-runs.log").read_text().split()) == (1, runs)
    assert len(list((Path(settings.index_dir) / CACHE_DIR).glob("*.json"))) == 3
