"""Vim help files: sections and tagged entries, as ``:help help-writing`` lays them out."""

from __future__ import annotations

import pytest

from tests.index.test_chunk_properties import assert_invariants
from vq.indexer.handlers import Limits
from vq.indexer.handlers.text import text_handler

HELP = """\
*picker.txt*    Find, filter, preview, pick.

==============================================================================
INTRODUCTION                                                  *picker.nvim*

Picker finds files and greps them.

picker.setup({opts})                                          *picker.setup()*
    Set the plugin up: call it once from your config.

                                                    *picker.defaults.winblend*
winblend: ~
    How transparent the floating windows are, 0 to 100.

------------------------------------------------------------------------------
Pickers                                                     *picker.pickers*

builtin.live_grep({opts})                                *builtin.live_grep()*
    Search for a string in the current directory as you type (needs ripgrep).

 vim:tw=78:ts=8:ft=help:norl:
"""


def rows(text: str, path: str) -> list[tuple[int, int, str]]:
    document = text_handler(text, path, Limits())
    assert_invariants(text, document)
    return [(c.start_line, c.end_line, c.breadcrumb) for c in document.chunks]


def test_a_help_file_is_cut_at_its_sections_and_entries() -> None:
    """Read as paragraphs, every hit's breadcrumb was the path; now a hit names its
    section and the tag ``:help`` jumps to."""
    assert rows(HELP, "doc/picker.txt") == [
        (1, 3, "picker"),  # a separator ends the chunk above it, as RST's overline does
        (4, 6, "picker > INTRODUCTION"),
        (8, 9, "picker > INTRODUCTION > picker.setup()"),
        (11, 15, "picker > INTRODUCTION > picker.defaults.winblend"),  # its tag line above
        (16, 21, "picker > INTRODUCTION > Pickers > builtin.live_grep()"),  # a bare title joins
    ]


@pytest.mark.parametrize("text", [
    HELP.replace("*picker.txt*", "picker.txt"),  # the modeline alone says so
    HELP.replace(" vim:tw=78:ts=8:ft=help:norl:\n", ""),  # the first line alone says so
])
def test_either_mark_of_a_help_file_is_enough(text: str) -> None:
    assert rows(text, "doc/picker.txt")[2][2] == "picker > INTRODUCTION > picker.setup()"


def test_other_text_files_stay_paragraphs() -> None:
    notes = "Shopping *list*\n\n==========\nMilk      *dairy*\n"
    assert {crumb for _, _, crumb in rows(notes, "notes.txt")} == {"notes.txt"}
    assert {crumb for _, _, crumb in rows(HELP, "doc/picker.cfg")} == {"doc/picker.cfg"}


@pytest.mark.model
def test_a_help_entry_is_found_with_its_breadcrumb(tmp_path, build, cli) -> None:
    from tests.conftest import build_and_search

    hits = build_and_search(tmp_path, build, cli, {"doc/picker.txt": HELP}, "code",
                            "grep as you type with ripgrep", "-n", "2")
    assert (hits[0]["start_line"], hits[0]["breadcrumb"]) == \
        (16, "picker > INTRODUCTION > Pickers > builtin.live_grep()")
