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
