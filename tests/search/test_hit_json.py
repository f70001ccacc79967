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


def test_a_code_hit_carries_its_numbered_lines_and_prose_does_not():
    code = hit("def f(x):\n    a = 1\n    b = 2\n    return x.frobnicate()\n")
    assert hit_json(code, "frobnicate")["lines"] == [[1, "def f(x):"], [None, "⋮"],
                                                     [4, "    return x.frobnicate()"]]
    prose = Hit(id="2", vault="v", path="a.md", abs_path="/v/a.md", start_line=3, end_line=4,
                breadcrumb="A", kind="notes", text="frobnicate the widgets")
    assert "lines" not in hit_json(prose, "frobnicate")


def test_a_code_line_longer_than_the_terminal_is_cut_not_wrapped():
    """A wrapped code line would start a row without its number; it is cut with …."""
    import io

    from rich.console import Console

    from vq.query.output import render
    from vq.query.search import Result

    long = "    return frobnicate(" + ", ".join(f"argument_{n}" for n in range(20)) + ")"
    code = hit("def f(x):\n" + long + "\n")
    code.rank = 1
    out = io.StringIO()
    render(Result([code], "lexical", "lexical", "m"), "frobnicate", False,
           Console(file=out, width=60, highlight=False))
    rows = out.getvalue().splitlines()  # no breadcrumb line: it is the path, said above
    assert rows[1:] == ["    1  def f(x):",
                        "    2      return frobnicate(argument_0, argument_1, argume…"]


def test_a_location_longer_than_the_terminal_starts_on_its_rank_line():
    """gson's deep Java paths: the rank stood alone on a line and the location below."""
    import io

    from rich.console import Console

    from vq.query.output import render
    from vq.query.search import Result

    deep = "extras/src/main/java/com/google/gson/typeadapters/RuntimeTypeAdapterFactory.java"
    code = Hit(id="1", vault="code", path=deep, abs_path="/" + deep, start_line=243,
               end_line=253, breadcrumb=deep, kind="code", text="int x;", language="java",
               rank=1)
    out = io.StringIO()
    render(Result([code], "lexical", "lexical", "m"), "x", False,
           Console(file=out, width=60, highlight=False))
    rows = out.getvalue().splitlines()
    assert rows[0].startswith(f" 1. code:{deep}:243-253  ")  # one line: the terminal folds it


def test_a_wrapped_snippet_stays_under_its_rank_line():
    """NATS' ADR-59: a snippet of a numbered list wrapped at column 0, where its "2. HTTP
    monitoring" read as the second hit; every wrapped line keeps the indent, no padding."""
    import io

    from rich.console import Console

    from vq.query.output import render
    from vq.query.search import Result

    text = ("1. JetStream API: the StreamInfo response includes mirror.error and the sources. "
            "2. HTTP monitoring: the jsz endpoint includes the same fields in its details.")
    prose = Hit(id="2", vault="adr", path="ADR-59.md", abs_path="/adr/ADR-59.md",
                start_line=574, end_line=581, kind="notes", text=text, rank=1,
                breadcrumb="JetStream Stream Sourcing and Mirroring > Monitoring > Errors")
    out = io.StringIO()
    render(Result([prose], "lexical", "lexical", "m"), "monitoring", False,
           Console(file=out, width=50, highlight=False))
    rows = out.getvalue().splitlines()
    assert len(rows) > 4 and rows[0].startswith(" 1. adr:ADR-59.md:574-581")
    assert all(r.startswith("    ") and r[4] != " " and r == r.rstrip() for r in rows[1:])


def test_a_dated_note_says_its_date_in_json_and_on_its_rank_line():
    """What --since reads, for a script or an assistant (MCP) to judge a record's age."""
    dated = Hit(id="3", vault="adr", path="ADR-1.md", abs_path="/adr/ADR-1.md", start_line=1,
                end_line=9, breadcrumb="A", kind="notes", text="errors", date="2020-04-30")
    assert hit_json(dated, "errors")["date"] == "2020-04-30"
    assert "date" not in hit_json(hit("var a = 1;"), "var")
    import io

    from rich.console import Console

    from vq.query.output import render
    from vq.query.search import Result

    dated.rank, dated.score = 1, 0.5
    out = io.StringIO()
    render(Result([dated], "lexical", "lexical", "m"), "errors", False,
           Console(file=out, width=80, highlight=False))
    assert out.getvalue().splitlines()[0] == " 1. adr:ADR-1.md:1-9  2020-04-30  0.5000"
