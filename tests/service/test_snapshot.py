"""The service's resident vectors rank exactly as LanceDB's flat scan (real tables, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.latency import write_table
from vq.query.search import ANN_REFINE, SECTION_REFINE
from vq.query.service import int8_screen, snapshot
from vq.query.sources import COLUMNS, LanceSources

REFINE = {"vector": ANN_REFINE, "section_vector": SECTION_REFINE}


def _dense(sources, q, where, pool, column="vector"):
    return sources.nearest(q, column, where, pool, REFINE[column])


def _lexical(sources, text, where, k):
    return sources.lexical(text, where, k, 0.0)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    settings, index, _ = write_table(tmp_path_factory.mktemp("resident"), 3000)
    return settings, index


@pytest.mark.parametrize("where", [None, "path LIKE '%1%'", "start_line = 1 AND mtime > 0",
                                   "false"])
@pytest.mark.parametrize("pool", [1, 100, 5000])
@pytest.mark.parametrize("screened", [False, True])
@pytest.mark.parametrize("column", ["vector", "section_vector"])
def test_resident_matrix_equals_lancedb_flat_search(table, where, pool, screened, column,
                                                    monkeypatch):
    """With or without the int8 screen (``vq.query.service.int8_screen``, forced on for this small
    table) each matrix (pieces', sections') returns LanceDB's exact flat-scan rows."""
    settings, index = table
    assert snapshot.eligible(index, settings)
    monkeypatch.setattr(int8_screen, "MIN_ROWS", 0 if screened else 10**9)
    snap = snapshot.load(index, COLUMNS)
    assert (snap.screen is not None) == screened
    wrapped = snapshot.SnapshotSources(index, snap)
    disk = LanceSources(index)
    rng = np.random.default_rng(pool)
    for _ in range(3):
        q = rng.standard_normal(384).astype(np.float32)
        want = _dense(disk, q, where, pool, column).to_pylist()
        got = _dense(wrapped, q, where, pool, column).to_pylist()
        if screened and pool < 5000 and where is None:  # the screen narrowed, not the fallback
            unit = snapshot._unit_query(q, snap.stored)
            assert len(int8_screen.candidates(snap.matrix(column)[1], unit, pool)) < 3000 / 4
        assert len(got) == len(want)
        assert [r["_distance"] for r in got] == pytest.approx(
            [r["_distance"] for r in want], abs=1e-6)
        # the same rows, each at its distance: the order is the same up to rows whose
        # distances tie (float16 vectors) or differ by one float32 ulp
        mine = {r["id"]: r["_distance"] for r in got}
        assert mine.keys() == {r["id"] for r in want}
        assert all(abs(mine[r["id"]] - r["_distance"]) <= 1e-6 for r in want)
        if got:
            assert got[0].keys() == want[0].keys()


def test_a_new_version_is_seen_by_a_reload_only(table):
    settings, index = table
    snap = snapshot.load(index, COLUMNS)
    assert snap.version == index.chunks.version and len(snap.ids) == 3000
    assert not snapshot.eligible(index, type(settings)(
        index_dir=settings.index_dir,
        maintenance=type(settings.maintenance)(vector_index_min_rows=100)))


@pytest.mark.parametrize("vectors", [True, False])
@pytest.mark.parametrize("where", [None, "path LIKE '%1%'"])
def test_snapshot_rows_answer_bm25_and_vectors_as_lancedb_does(table, vectors, where):
    """FTS (and, without the matrix, vector) queries ask LanceDB for ids and scores only and
    take every other column from the snapshot: the very rows and scores LanceDB returns."""
    settings, index = table
    snap = snapshot.load(index, COLUMNS, vectors=vectors)
    assert snap.rows is not None and (snap.vectors is not None) == vectors
    wrapped = snapshot.SnapshotSources(index, snap)
    disk = LanceSources(index)
    for text in ("log", "metric alert", "billing invoice token"):
        want, got = (_lexical(i, text, where, 50).to_pylist() for i in (disk, wrapped))
        assert want and got == want
    q = np.random.default_rng(5).standard_normal(384).astype(np.float32)
    want, got = (_dense(i, q, where, 50).to_pylist() for i in (disk, wrapped))
    assert [r["id"] for r in got] == [r["id"] for r in want] or vectors
    assert {r["id"] for r in got} == {r["id"] for r in want}
    assert [r["text"] for r in sorted(got, key=lambda r: r["id"])] == [
        r["text"] for r in sorted(want, key=lambda r: r["id"])]


def test_rows_over_the_budget_are_read_from_the_table(table, monkeypatch):
    settings, index = table
    monkeypatch.setattr(snapshot, "MAX_BYTES", 3000 * 384 * 4 + 1)  # the matrix fits, rows not
    snap = snapshot.load(index, COLUMNS)
    assert snap.rows is None and snap.vectors is not None
    wrapped = snapshot.SnapshotSources(index, snap)
    disk = LanceSources(index)
    q = np.random.default_rng(6).standard_normal(384).astype(np.float32)
    want, got = (_dense(i, q, None, 20).to_pylist() for i in (disk, wrapped))
    assert {r["id"]: r["text"] for r in got} == {r["id"]: r["text"] for r in want}
    assert _lexical(wrapped, "metric", None, 20).to_pylist() == _lexical(
        disk, "metric", None, 20).to_pylist()


def test_ann_candidates_are_refined_from_memory_as_lancedb_refines_them(tmp_path):
    """With vector indexes (pieces' and sections') the matrices only re-rank each index's
    refine x limit candidates: the same ids and exact distances as LanceDB's own
    refine_factor, read from disk."""
    from bench.latency import add_vector_index
    from vq.core.search_indexes import SECTION_VECTOR_INDEX, VECTOR_INDEX, indices

    settings, index, _ = write_table(tmp_path / "ann", 3000)
    add_vector_index(settings, index)
    assert {VECTOR_INDEX, SECTION_VECTOR_INDEX} <= indices(index.chunks).keys()
    assert not snapshot.eligible(index, settings) and snapshot.fits(index)
    snap = snapshot.load(index, COLUMNS, vectors=True, flat=False)
    wrapped = snapshot.SnapshotSources(index, snap)
    disk = LanceSources(index)
    rng = np.random.default_rng(9)
    for where, column in ((None, "vector"), ("path LIKE '%1%'", "vector"),
                          (None, "section_vector")):
        q = rng.standard_normal(384).astype(np.float32)
        want, got = (_dense(i, q, where, 30, column).to_pylist() for i in (disk, wrapped))
        assert len(got) == len(want) == 30
        assert {r["id"]: r["text"] for r in got} == {r["id"]: r["text"] for r in want}
        mine = {r["id"]: r["_distance"] for r in got}
        assert all(abs(mine[r["id"]] - r["_distance"]) <= 1e-6 for r in want)
        assert [r["_distance"] for r in got] == sorted(r["_distance"] for r in got)


def test_each_vector_search_refines_by_its_own_factor(table):
    """The section search's 300-row pool is re-ranked from 5x its rows, the piece search's
    from 10x: a hybrid search asks its sources for each column's own factor."""
    from vq.query import search

    settings, index = table
    asked: list[tuple[str, int]] = []

    class Recording(LanceSources):
        def nearest(self, vector, column, where, k, refine):
            asked.append((column, refine))
            return super().nearest(vector, column, where, k, refine)

    class Fixed:
        def encode(self, text):
            return np.random.default_rng(3).standard_normal(384).astype(np.float32), "cpu", "t"

    res = search.search(settings, search.Query("log metric"), Recording(index), Fixed())
    assert res.method == "hybrid" and res.hits
    assert asked == [("vector", search.ANN_REFINE), ("section_vector", search.SECTION_REFINE)]
    assert search.SECTION_REFINE < search.ANN_REFINE
