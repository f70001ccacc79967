"""SIGKILL at random moments of real `vq build` subprocesses, then a normal build converges.

The builds use the deterministic test encoder (``vq-test/hash-384``): what is under
test is the order of table writes, not the vectors, and every subprocess skips
the seconds of torch import and model load before its first write.
"""

from __future__ import annotations

import pytest

from tests.reliability import harness
from vq.core.settings import load_settings
from vq.jobs.runner import Skipped, locked_build

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def timing(tmp_path_factory):
    """When an unkilled first and incremental `vq build` subprocess write, here."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VQ_TEST_MODELS", "1")
        return harness.timings(tmp_path_factory.mktemp("timing"), 30, harness.TEST_MODEL)


# Seeds chosen so each kind of kill is tried once on each phase's draw; ``within=0.5``
# keeps every kill inside the build's first half, so it lands while the build runs.
@pytest.mark.parametrize("seed, phase, mode", [(3, "first", "working"), (5, "first", "at-write"),
                                               (2, "incremental", "at-write"),
                                               (4, "incremental", "working")])
def test_killed_builds_converge_to_a_clean_build(tmp_path, seed, phase, mode, timing,
                                                  test_models):
    def in_process(config):
        result = locked_build(load_settings(str(config)))
        assert not isinstance(result, Skipped), "a killed build's lock was still held"

    trials = harness.run_seed(tmp_path, seed, timing, files=30, build=in_process,
                              phases=(phase,), model=harness.TEST_MODEL, within=0.5)
    assert [(t.phase, t.kill.mode) for t in trials] == [(phase, mode)]
    for t in trials:
        assert t.kill.killed, f"the build finished before the kill: nothing was tested {t}"
        assert t.kill.writes_seen >= 1, f"killed before its first write {t}"
        assert t.converged, t


@pytest.mark.parametrize("seed", [11, 12])
def test_a_build_killed_while_embedding_converges(tmp_path, seed, test_models):
    """Text committed, vectors part-way: the kill leaves rows without vectors (searchable by
    text) that the next build embeds, and no others."""
    import random

    from vq.core.build_progress import read_record

    vault, index, ref = tmp_path / "vault", tmp_path / "index", tmp_path / "ref"
    harness.write_vault(vault, seed, 40)
    cfg = harness.write_config(tmp_path / "vq.yaml", vault, index, model=harness.TEST_MODEL)
    ref_cfg = harness.write_config(tmp_path / "ref.yaml", vault, ref, model=harness.TEST_MODEL)
    kill = harness.kill_in_phase(cfg, index, "embed", random.Random(seed))
    assert kill.killed, f"the build finished before the kill: nothing was tested {kill}"
    assert read_record(index / "build.lock")["pending_possible"]
    for config in (cfg, ref_cfg):
        assert locked_build(load_settings(str(config))).outcome == "ok"
    assert harness.snapshot(str(index)) == harness.snapshot(str(ref))
    assert read_record(index / "build.lock") is None


@pytest.mark.parametrize("phase, damaged", [("embed", False), ("embed", True),
                                            ("read", False)])
def test_a_killed_rebuild_leaves_a_searchable_index_and_the_next_build_continues_it(
        tmp_path, phase, damaged, test_models):
    """`vq build --rebuild` SIGKILLed while it commits text ("read") or while its rows wait
    for vectors ("embed"). Over a readable index it wrote staged tables: the old index is
    left as it was, and the next plain build continues the stage, encoding only the rows
    it left without vectors. Over a damaged one it wrote in place, text first: the text it
    committed answers, and the next build finishes it. Either converges to a clean build."""
    import random

    from vq.core import store
    from vq.indexer.embed import PENDING
    from vq.query.search import Query, search

    vault, index, ref = tmp_path / "vault", tmp_path / "index", tmp_path / "ref"
    harness.write_vault(vault, 13, 40)
    cfg = harness.write_config(tmp_path / "vq.yaml", vault, index, model=harness.TEST_MODEL)
    ref_cfg = harness.write_config(tmp_path / "ref.yaml", vault, ref, model=harness.TEST_MODEL)
    assert locked_build(load_settings(str(cfg))).outcome == "ok"
    before = harness.snapshot(str(index))
    if damaged:
        for path in (index / "chunks.lance" / "data").glob("*.lance"):
            path.unlink()
    kill = harness.kill_in_phase(cfg, index, phase, random.Random(13), args=("--rebuild",))
    assert kill.killed, f"the rebuild finished before the kill: nothing was tested {kill}"
    hits = search(load_settings(str(cfg)), Query("rollback release", "lexical", 5)).hits
    assert hits, "nothing answered after the killed rebuild"
    if damaged:
        pending = store.open_index(str(index)).chunks.count_rows(PENDING)
        assert pending > 0, "the kill did not land between text and vectors"
    else:
        assert harness.snapshot(str(index)) == before, "a killed rebuild changed the old index"
        pending = store.open_index(str(index / store.STAGE_DIR)).chunks.count_rows(PENDING)
    summary = locked_build(load_settings(str(cfg)))
    assert summary.outcome == "ok" and summary.continued_rebuild is not damaged
    assert summary.chunks_encoded <= pending or phase == "read", \
        "the continued rebuild encoded rows the stage already held vectors for"
    assert locked_build(load_settings(str(ref_cfg))).outcome == "ok"
    assert harness.snapshot(str(index)) == harness.snapshot(str(ref))
    assert not (index / store.STAGE_DIR).exists(), "the finished rebuild left its stage"
