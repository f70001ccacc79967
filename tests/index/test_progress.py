"""Build progress: one total that never shrinks while files are read and is exact once
they are, a line every 30 s off a TTY, a record."""

from __future__ import annotations

import io

from vq.core.build_progress import embedded_line, read_record
from vq.indexer import progress
from vq.indexer.progress import LineProgress, NullProgress, RichProgress, Tracker, make_progress


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_total_never_moves_backwards_while_the_estimate_is_refined():
    t = Tracker(now=Clock())
    t.planned(files=10, nbytes=100 * progress.BYTES_PER_CHUNK, pending=5)
    totals = [t.total]
    assert t.total == 105
    t.chunked(files=2, nbytes=10_000, rows=40, with_vectors=0)  # denser than the prior
    totals.append(t.total)
    t.chunked(files=7, nbytes=70_000, rows=10, with_vectors=0)  # then far sparser
    totals.append(t.total)
    assert totals == sorted(totals) and totals[1] > totals[0], totals
    assert t.total == totals[1], "the estimate shrank the total while files were read"
    t.chunked(files=1, nbytes=10_000, rows=10, with_vectors=0)  # the last file
    assert t.total == 65 < totals[1], "every file read: the total is what they made"
    t.embedded(30)
    t.finish()
    assert t.done == t.total == 65, "a finished build's bar is full"


def test_rate_and_eta_come_from_the_embedding_so_far():
    clock = Clock()
    t = Tracker(now=clock)
    t.planned(files=1, nbytes=0, pending=100)
    t.phase("embed")
    clock.t = 10.0
    t.embedded(40)
    view = t.view()
    assert view.rate == 4.0 and view.eta == 15.0
    assert "40 of ~100 chunks embedded (40%)" in view.line() and "ETA 0m15s" in view.line()


def test_the_total_is_marked_as_an_estimate_until_every_file_is_read():
    t = Tracker(now=Clock())
    t.planned(files=2, nbytes=2 * progress.BYTES_PER_CHUNK, pending=0)
    assert "0 of ~2 chunks" in t.view().line()
    t.chunked(files=1, nbytes=progress.BYTES_PER_CHUNK, rows=1, with_vectors=0)
    assert "0 of ~2 chunks" in t.view().line()
    t.chunked(files=1, nbytes=progress.BYTES_PER_CHUNK, rows=1, with_vectors=0)
    assert "0 of 2 chunks" in t.view().line(), "every file read: the count is known"
    over = Tracker(now=Clock())  # notebooks: megabytes of outputs that make few chunks
    over.planned(files=1, nbytes=10 * progress.BYTES_PER_CHUNK, pending=0)
    assert "0 of ~10 chunks" in over.view().line()
    over.chunked(files=1, nbytes=10 * progress.BYTES_PER_CHUNK, rows=3, with_vectors=0)
    assert "0 of 3 chunks" in over.view().line(), "an estimate above what they made: gone"


def test_off_a_tty_one_line_every_30_seconds():
    clock, out = Clock(), io.StringIO()
    t = Tracker(LineProgress(out, clock), now=clock)
    t.planned(files=4, nbytes=0, pending=200)
    t.phase("embed")
    for second in range(1, 95):
        clock.t = float(second)
        t.embedded(1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines  # at 30, 60 and 90 s
    assert lines[0].startswith("vq build: embed: 30 of ~200 chunks embedded (15%)")


def test_the_record_beside_the_lock_says_how_much_is_embedded(tmp_path):
    lock = tmp_path / "build.lock"
    t = Tracker(lock_path=lock, now=Clock())
    t.table_rows, t.table_pending = 15_348, 15_348
    t.planned(files=3, nbytes=0, pending=15_348)
    t.phase("embed")
    t.embedded(12_400)
    record = read_record(lock)
    assert record["done"] == 12_400 and record["phase"] == "embed"
    assert embedded_line(record) == "12,400 of 15,348 chunks embedded"
    assert embedded_line({**record, "staged": True}) is None  # a rebuild's tables: not searched


def test_a_bar_on_a_tty_a_line_in_ci_none_when_asked(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert type(make_progress()) is LineProgress
    assert type(make_progress(False)) is NullProgress
    forced = make_progress(True)
    forced.close()
    assert isinstance(forced, RichProgress)


def test_progress_lines_are_json_with_the_whole_builds_counts():
    """`vq build --progress-lines` (what `vq ui` reads): a change of phase is always
    written, other updates at most every ``every`` seconds."""
    import json

    from vq.indexer.progress import JsonLinesProgress

    clock, out = Clock(), io.StringIO()
    t = Tracker(JsonLinesProgress(out, every=3600.0, now=clock), now=clock)
    t.planned(files=2, nbytes=0, pending=10)
    t.phase("embed")
    t.embedded(4)  # within ``every`` of the phase's line: not written
    t.phase("optimize")
    t.finish()  # the last step, within ``every`` too
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == [{"stage": "discover", "done": 0, "total": 10},
                     {"stage": "embed", "done": 0, "total": 10},
                     {"stage": "optimize", "done": 4, "total": 10},
                     {"stage": "optimize", "done": 10, "total": 10}]
    assert type(make_progress("lines")) is JsonLinesProgress
