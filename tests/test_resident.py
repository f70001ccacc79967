"""The service's resident vectors rank exactly as LanceDB's flat scan (real tables, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.latency import write_table
from vq.query import resident
from vq.query.search import _dense


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    settings, index, _ = write_table(tmp_path_factory.mktemp("resident"), 3000)
    return settings, index


@pytest.mark.parametrize("where", [None, "path LIKE '%1%'", "start_line = 1 AND mtime > 0",
                                   "false"])
@pytest.mark.parametrize("pool", [1, 100, 5000])
def test_resident_matrix_equals_lancedb_flat_search(table, where, pool):
    settings, index = table
    assert resident.eligible(index, settings)
    wrapped = resident.wrap(index, resident.load(index))
    rng = np.random.default_rng(pool)
    for _ in range(3):
        q = rng.standard_normal(384).astype(np.float32)
        want = _dense(index, q, where, pool).to_pylist()
        got = _dense(wrapped, q, where, pool).to_pylist()
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
    matrix = resident.load(index)
    assert matrix.version == index.chunks.version and len(matrix.ids) == 3000
    assert not resident.eligible(index, type(settings)(
        index_dir=settings.index_dir,
        maintenance=type(settings.maintenance)(vector_index_min_rows=100)))
