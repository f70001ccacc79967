"""SIGKILL at random moments of real `vq build` subprocesses, then a normal build converges."""

from __future__ import annotations

import pytest

from core.settings import load_settings
from jobs.runner import Skipped
from tests.reliability import harness

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def full_seconds(tmp_path_factory):
    """How long one unkilled `vq build` subprocess takes here (model load included)."""
    work = tmp_path_factory.mktemp("timing")
    harness.write_vault(work / "vault", 0, 30)
    return harness.timed_build(harness.write_config(work / "t.yaml", work / "vault",
                                                    work / "index"))


@pytest.mark.parametrize("seed, phase", [(1, "first"), (2, "incremental"), (3, "incremental")])
def test_killed_builds_converge_to_a_clean_build(tmp_path, seed, phase, full_seconds, build):
    def in_process(config):
        result = build(load_settings(str(config)))
        assert not isinstance(result, Skipped), "a killed build's lock was still held"

    trials = harness.run_seed(tmp_path, seed, full_seconds, files=30, build=in_process,
                              phases=(phase,))
    assert [t.phase for t in trials] == [phase]
    for t in trials:
        assert t.converged, t
