"""bench.live's sampling discipline and its report, on tiny inputs. No test here asserts
a time: the figures are made up, the assertions are on what the report says."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import live  # noqa: E402


def test_each_sample_starts_from_a_quiet_watcher():
    """A save written while the previous batch still embeds waits for that batch: the
    sampler must wait for quiet before every sample, not only the first."""
    calls: list[str] = []

    def quiet() -> bool:
        calls.append("quiet")
        return True

    def one(i: int) -> float:
        calls.append(f"sample {i}")
        return [1.0, 3.0, 2.0][i]

    out = live._samples(3, one, quiet)
    assert calls == ["quiet", "sample 0", "quiet", "sample 1", "quiet", "sample 2"]
    assert out["n"] == 3 and out["max_s"] == 3.0 and out["all_s"] == [1.0, 3.0, 2.0]


def _case(p50: float, p95: float) -> dict:
    return {"n": 20, "p50_s": p50, "p95_s": p95, "max_s": p95}


def test_report_names_every_part_of_the_one_run():
    result = {
        "latency": {"edit": {**_case(1.2, 1.4), "batch_stages_median_s": {"write": 0.05}},
                    "new_file": _case(1.3, 1.5), "delete": _case(1.1, 1.3),
                    "burst": {"files": 1000, "write_s": 0.1,
                              "searchable_after_last_write_s": 2.3,
                              "embedded_after_last_write_s": 12.0}},
        "service": {"edit": _case(1.25, 1.45), "new_file": _case(1.4, 1.7),
                    "delete": _case(1.3, 1.4)},
        "noop": {"files": 100_000, "chunks": 391_956, "repeats": 7, "noop_best_s": 0.77,
                 "stat_walk_best_s": 0.55, "ratio_best": 1.41, "noop_median_s": 1.1,
                 "stat_walk_median_s": 0.8, "ratio_median": 1.38, "plans": ["walk cache"],
                 "noop_did_work": 0},
        "idle": {"files": 100_000, "folders": 2019, "rss_watching_mib": 27.5,
                 "rss_added_mib": 2.7, "idle_cpu_percent": 0.12, "idle_seconds": 30.0},
    }
    text = live.markdown(result)
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert [r.split(" | ")[:2] for r in rows] == [
        ["| edit", "in-process"], ["| new file", "in-process"], ["| delete", "in-process"],
        ["| edit", "`vq serve`"], ["| new file", "`vq serve`"], ["| delete", "`vq serve`"]]
    assert "| 1.45 s |" in rows[3] and "write 0.05" in rows[0]
    assert "all embedded 12.0 s" in text
    assert "**1.41×**" in text and "100,000 files" in text and "plan walk cache" in text
    assert "2,019 folders" in text and "RSS 27.5 MiB" in text


def test_report_without_latency_says_so():
    text = live.markdown({"idle": {"files": 10, "folders": 2, "rss_watching_mib": 20.0,
                                   "rss_added_mib": 0.1, "idle_cpu_percent": 0.0,
                                   "idle_seconds": 1.0}})
    assert text.startswith("(no latency measured)") and "| case |" not in text
