"""Progress bars: one bar per stage, totals that grow batch by batch."""

from __future__ import annotations

from vq.indexer.progress import NullProgress, RichProgress, make_progress


def test_each_stage_keeps_one_bar_whose_total_grows_per_batch():
    bar = RichProgress()
    try:
        bar.stage("index", 3)
        for texts in (5, 2):  # two write batches, each encoding some chunks
            bar.stage("encode", texts)
            bar.advance(texts)
            bar.stage("index")
        bar.advance(3)
        bars = {t.description: (t.completed, t.total) for t in bar._progress.tasks}
    finally:
        bar.close()
    assert bars == {"index": (3, 3), "encode": (7, 7)}


def test_no_bars_off_a_tty_or_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert type(make_progress()) is NullProgress
    forced = make_progress(True)
    forced.close()
    assert isinstance(forced, RichProgress)


def test_progress_lines_are_json_per_stage_with_counts_that_grow_per_batch():
    """`vq build --progress-lines` (what `vq ui` reads): a stage switch and a stage's last
    step always make a line; each stage keeps its own counts, as the bars do."""
    import io
    import json

    from vq.indexer.progress import LineProgress

    out = io.StringIO()
    bar = make_progress("lines")
    assert isinstance(bar, LineProgress)
    bar = LineProgress(out, every=3600.0)  # no timed lines: only the forced ones
    bar.stage("discover")
    bar.stage("index", 3)
    for texts in (5, 2):
        bar.stage("encode", texts)
        bar.advance(texts - 1)  # within the interval: no line
        bar.advance(1)          # the stage's last step so far: a line
        bar.stage("index")
    bar.advance(3)
    bar.close()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0] == {"stage": "discover", "done": 0, "total": 0}
    assert {"stage": "encode", "done": 5, "total": 5} in lines
    assert {"stage": "encode", "done": 7, "total": 7} in lines
    assert lines[-1] == {"stage": "index", "done": 3, "total": 3}
    assert not any(line["stage"] == "encode" and line["done"] == 4 for line in lines)
