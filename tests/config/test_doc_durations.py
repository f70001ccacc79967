"""Every duration the docs show reads, in the one grammar (core/durations.py), as the text
around it means it: a doc that says ``6m`` for six months sends users to an empty search.

What "the text means" is read three ways, each a habit of these docs:
- an argument of a duration flag (``--since``, ``--max-age``, ``--interval``) parses;
- a gloss right after a duration (```15m` (minutes)``) names the unit it parses to;
- a run of examples (```2w`, `30d`, `6mo```) is written smallest first, loosely: no
  example is under a tenth of the one before it. A unit read other than the author
  meant is off by far more (``6m`` after ``2w`` is six minutes: 1/3360 of it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vq.core.durations import UNITS, is_duration, parse_duration

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
_UNIT = "|".join(sorted(map(re.escape, UNITS), key=len, reverse=True))
TOKEN = rf"`(\d+(?:\.\d+)?(?:{_UNIT}))`"
RUN = re.compile(rf"{TOKEN}(?:\s*,\s*(?:or\s+|and\s+)?{TOKEN})+")
GLOSS = re.compile(rf"{TOKEN}\s*\((seconds?|minutes?|hours?|days?|weeks?|months?|years?)\)")
FLAG_ARG = re.compile(r"(--since|--max-age|--interval)[ =]([^\s`|)\]]+(?:\|[^\s`|)\]]+)*)")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WORD_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400,
                "month": 30 * 86400, "year": 365 * 86400}


def paragraphs(path: Path) -> list[tuple[str, str]]:
    """(where, text) per paragraph, lines joined, so a run may wrap."""
    text = path.read_text(encoding="utf-8")
    out = []
    for block in re.split(r"\n\s*\n", text):
        line = text[:text.find(block)].count("\n") + 1
        out.append((f"{path.name}:{line}", " ".join(block.split("\n"))))
    return out


ALL = [p for path in DOCS for p in paragraphs(path)]
NAMES = [path.name for path in DOCS]


def test_the_docs_show_durations_at_all() -> None:
    """The test reads something: the README and docs hold runs, glosses and flag examples."""
    assert sum(len(RUN.findall(t)) for _, t in ALL) >= 3
    assert sum(len(FLAG_ARG.findall(t)) for _, t in ALL) >= 3


@pytest.mark.parametrize("doc", DOCS, ids=NAMES)
def test_runs_of_examples_ascend(doc: Path) -> None:
    for where, text in paragraphs(doc):
        check_runs(where, text)


def check_runs(where: str, text: str) -> None:
    for run in RUN.finditer(text):
        tokens = re.findall(TOKEN, run.group(0))
        seconds = [parse_duration(t) for t in tokens]
        assert not out_of_order(seconds), (
            f"{where}: {tokens} read as {seconds} seconds, out of order: is `m` (minutes) "
            "meant as months (`mo`)?")


def out_of_order(seconds: list[float]) -> bool:
    return any(b < a / 10 for a, b in zip(seconds, seconds[1:], strict=False))


@pytest.mark.parametrize("doc", DOCS, ids=NAMES)
def test_glossed_units_match_the_grammar(doc: Path) -> None:
    for where, text in paragraphs(doc):
        for token, word in GLOSS.findall(text):
            unit = WORD_SECONDS[word.rstrip("s")]
            number = float(re.match(r"[\d.]+", token).group(0))
            assert parse_duration(token) == number * unit, f"{where}: `{token}` is not {word}"


@pytest.mark.parametrize("doc", DOCS, ids=NAMES)
def test_flag_examples_parse(doc: Path) -> None:
    for where, text in paragraphs(doc):
        for flag, arg in FLAG_ARG.findall(text):
            for value in arg.split("|"):
                if not value[:1].isdigit() or (flag == "--since" and DATE.match(value)):
                    continue  # a placeholder (`--max-age SECONDS`, `…`), or a date
                assert is_duration(value), f"{where}: {flag} {value} is not a duration"


def test_the_checks_catch_the_months_that_were_minutes() -> None:
    """The line this test was written for, as it was."""
    old = "`YYYY-MM-DD` or an age (`30d`, `2w`, `6m`): frontmatter date, else mtime"
    tokens = re.findall(TOKEN, RUN.search(old).group(0))
    assert out_of_order([parse_duration(t) for t in tokens])
    assert not out_of_order([parse_duration(t) for t in ("30d", "2w", "6mo")])
