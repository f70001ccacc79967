"""A hit as JSON (`--json --explain`, MCP search): its full text is bounded."""

from __future__ import annotations

from vq.query.output import TEXT_CHARS, hit_json
from vq.query.search import Hit


def hit(text: str) -> Hit:
    return Hit(id="1", vault="v", path="min.js", abs_path="/v/min.js", start_line=1,
               end_line=1, breadcrumb="min.js", kind="code", text=text, language="javascript")


def test_a_megabyte_line_is_cut_in_json_and_says_how_long_it_was():
    line = "var a=1;" * 500_000  # a 4 MB minified bundle: one line, one chunk
    out = hit_json(hit(line), "var", with_text=True)
    assert out["text"] == line[:TEXT_CHARS] and out["text_chars"] == len(line)
    assert len(out["snippet"]) <= 240
    short = hit_json(hit("var a = 1;"), "var", with_text=True)
    assert short["text"] == "var a = 1;" and "text_chars" not in short
    assert "text" not in hit_json(hit(line), "var")
