"""SIGKILL at random moments of real `vq build` subprocesses, then a normal build converges."""

from __future__ import annotations

import pytest

from tests.reliability import harness
from vq.core.settings import load_settings
from vq.jobs.runner import Skipped

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def timing(tmp_path_factory):
    """When an unkilled first and incremental `vq build` subprocess write, here."""
    return harness.timings(tmp_path_factory.mktemp("timing"), 30)


# Seeds chosen so the kills land after the first write (see harness.kill_build), the
# kind that leaves half-written tables: a kill during start-up has nothing to break.
@pytest.mark.parametrize("seed, phase, mode", [(3, "first", "working"), (5, "first", "at-write"),
                                               (2, "incremental", "at-write"),
                                               (4, "incremental", "working")])
def test_killed_builds_converge_to_a_clean_build(tmp_path, seed, phase, mode, timing, build):
    def in_process(config):
        result = build(load_settings(str(config)))
        assert not isinstance(result, Skipped), "a killed build's lock was still held"

    trials = harness.run_seed(tmp_path, seed, timing, files=30, build=in_process,
                              phases=(phase,))
    assert [(t.phase, t.kill.mode) for t in trials] == [(phase, mode)]
    for t in trials:
        assert t.converged, t
        assert t.kill.writes_seen >= 1 or not t.kill.killed, t  # killed mid-build, not before
