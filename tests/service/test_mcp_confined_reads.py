"""Issue 17, items 2 and 7: MCP ``get`` cannot be raced out of a vault, and reads
what it returns in bounded blocks.

The race is made deterministic: the folder on the way is swapped for a link to
outside right after the path was checked (the window the red team hit 68 times
in 3,000 calls), for both the ``openat2`` path and the portable ``O_NOFOLLOW``
walk. A real swapping thread runs as well.
"""

from __future__ import annotations

import io
import os
import random
import threading
import tracemalloc

import pytest

from tests.conftest import write_tree
from vq.core import confined as beneath
from vq.core.errors import VqError
from vq.query.mcp import files as mcp_files
from vq.query.mcp.server import MAX_BYTES, VqService


@pytest.fixture(params=["openat2", "walk"])
def resolver(request, monkeypatch):
    if request.param == "walk":
        monkeypatch.setattr(beneath, "_openat2_works", False)
    return request.param


def _outside(tmp_path):
    out = tmp_path / "outside"
    write_tree(out, {"0001-storage.md": "TOP SECRET\n"})
    return out


def test_get_refuses_a_folder_swapped_for_a_link_after_the_check(built, vault, tmp_path,
                                                                 monkeypatch, resolver):
    outside = _outside(tmp_path)
    real_realpath = os.path.realpath

    def swap_after_check(path, *args, **kwargs):
        result = real_realpath(path, *args, **kwargs)
        if str(path).endswith("0001-storage.md") and not os.path.islink(vault / "adr"):
            os.rename(vault / "adr", vault / "adr.moved")
            os.symlink(outside, vault / "adr")
        return result

    monkeypatch.setattr(os.path, "realpath", swap_after_check)
    with pytest.raises(VqError) as info:
        VqService(built).get("notes:adr/0001-storage.md")
    assert "symlink" in info.value.message and "SECRET" not in str(info.value)


def test_get_never_reads_outside_while_a_folder_flips_to_a_link(built, vault, tmp_path,
                                                              resolver):
    outside = _outside(tmp_path)
    service = VqService(built)
    stop = threading.Event()
    flips = 0

    def flipper():
        nonlocal flips
        while not stop.is_set():
            os.rename(vault / "adr", vault / "adr.real")
            os.symlink(outside, vault / "adr")
            os.unlink(vault / "adr")
            os.rename(vault / "adr.real", vault / "adr")
            flips += 1

    thread = threading.Thread(target=flipper)
    thread.start()
    served = leaked = 0
    try:
        for _ in range(300):
            try:
                text = service.get("notes:adr/0001-storage.md")["text"]
            except VqError:
                continue
            served += 1
            leaked += "SECRET" in text
    finally:
        stop.set()
        thread.join()
    assert leaked == 0 and flips > 0
    assert "LanceDB" in service.get("notes:adr/0001-storage.md")["text"]


def test_get_of_three_lines_of_a_huge_one_line_file_stays_small(built, build, vault):
    write_tree(vault, {"big.md": "# Big\n\nsmall for now\n"})
    build(built)
    with open(vault / "big.md", "wb") as fh:  # grows after indexing: get reads the disk
        fh.write(b"# Big\n")
        block = b"x" * (1 << 20)
        for _ in range(64):
            fh.write(block)
        fh.write(b"\nthird line\nfourth\n")
    service = VqService(built)
    tracemalloc.start()
    try:
        page = service.get("notes:big.md", start_line=1, end_line=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20, f"peak {peak / 2**20:.0f} MiB for a 64 MiB line"
    assert page["total_lines"] == 4 and page["truncated_by"].startswith("size cap")
    assert (page["text"], page["end_line"]) == ("# Big", 1)  # the next call gets line 2
    second = service.get("notes:big.md", start_line=2, end_line=3)
    assert second["text"] == "x" * MAX_BYTES and second["truncated_by"].startswith("size cap")
    assert page["changed_since_indexed"]


def _reference(data: bytes) -> list[str]:
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace",
                            newline=None)
    return [line.rstrip("\n") for line in text]


@pytest.mark.parametrize("seed", range(40))
def test_block_reader_numbers_lines_like_universal_newlines(seed, monkeypatch):
    """Tiny blocks put \\r\\n, \\r and a BOM across block edges; the numbering must not move."""
    rng = random.Random(seed)
    monkeypatch.setattr(mcp_files, "BLOCK", rng.choice([1, 2, 3, 7, 64]))
    data = (b"\xef\xbb\xbf" if rng.random() < 0.3 else b"") + bytes(
        rng.choice(b"ab\r\n\xc3\xa9 ") for _ in range(rng.randrange(0, 120)))
    want = _reference(data)
    start = rng.randrange(1, max(len(want), 1) + 1)
    last = start + rng.randrange(0, 10)
    picker = mcp_files._LinePicker(start, last)
    picker.feed_all(io.BytesIO(data))
    assert picker.total == len(want)
    assert picker.lines == want[start - 1:last]
