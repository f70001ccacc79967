"""JSON Canvas (Obsidian's ``.canvas``): cards read as a board is scanned, groups as
headings over their cards, a real build finds a card by what it says."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import build_and_search
from vq.indexer.handlers import HandlerError, Limits, handler_for
from vq.indexer.handlers.canvas import canvas_handler, extract_canvas


def card(kind: str, x: int, y: int, **fields: str) -> dict:
    return {"id": f"{kind}{x}{y}", "type": kind, "x": x, "y": y, "width": 200, "height": 100,
            **fields}


BOARD = json.dumps({"nodes": [
    card("text", 400, 500, text="Sow the beans after the last frost.\n\n## Watering\n\nDaily."),
    card("group", 0, 0, label="Spring garden"),
    card("text", 40, 60, text="Four raised beds along the south fence."),
    card("file", 500, 60, file="Plans/Layout.md", subpath="#Beds"),
    card("link", 40, 900, url="https://example.org/frost-dates"),
    {"type": "text", "text": 7}, "not a card",
], "edges": [{"id": "e", "fromNode": "text4060", "toNode": "file50060", "label": "see"}]})


def test_cards_read_top_to_bottom_then_left_to_right():
    assert extract_canvas(BOARD.encode()) == (
        "# Spring garden\n\nFour raised beds along the south fence.\n\n"
        "[[Plans/Layout.md#Beds]]\n\nSow the beans after the last frost.\n\n## Watering\n\n"
        "Daily.\n\nhttps://example.org/frost-dates\n")


def test_the_title_is_the_file_name_and_cards_are_sections():
    assert handler_for("boards/Garden.canvas")[0] == "canvas"
    doc = canvas_handler(BOARD.encode(), "boards/Garden.canvas", Limits())
    assert doc.title == "Garden"
    assert [c.breadcrumb for c in doc.chunks] == [
        "Garden > Spring garden", "Garden > Spring garden > Watering"]


@pytest.mark.parametrize(("data", "reason"), [
    (b"{not json", "not a JSON Canvas (invalid JSON"),
    (b'{"edges": []}', "not a JSON Canvas (no node list)"),
    (b"[1, 2]", "not a JSON Canvas (no node list)"),
])
def test_what_is_no_canvas_says_so(data, reason):
    with pytest.raises(HandlerError, match=re.escape(reason)):
        extract_canvas(data)


@pytest.mark.model
def test_a_canvas_card_is_found_by_what_it_says(tmp_path, build, cli):
    hits = build_and_search(tmp_path, build, cli, {"Garden.canvas": BOARD, "other.md":
                                                   "# Other\n\nNothing about plants.\n"},
                            "notes", "when to sow beans")
    assert (hits[0]["path"], hits[0]["breadcrumb"]) == ("Garden.canvas",
                                                        "Garden > Spring garden")
