"""The int8 screen never drops a row of the exact top k (real onnxruntime, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from vq.query.service import int8_screen


def unit(m: np.ndarray) -> np.ndarray:
    m = m.astype(np.float16).astype(np.float32)  # stored vectors are float16
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def clustered(rows: int, seed: int) -> np.ndarray:
    """Text embeddings cluster: topics, with most rows near a few centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, 384))
    picks = rng.integers(0, 40, rows)
    return unit(centres[picks] + 0.6 * rng.standard_normal((rows, 384)))


@pytest.fixture(scope="module", params=["random", "clustered"])
def matrix(request):
    rng = np.random.default_rng(1)
    vectors = (unit(rng.standard_normal((4000, 384))) if request.param == "random"
               else clustered(4000, 2))
    return vectors, _built(vectors)


def _built(vectors):
    old, int8_screen.MIN_ROWS = int8_screen.MIN_ROWS, 0
    try:
        return int8_screen.build(vectors, threads=1)
    finally:
        int8_screen.MIN_ROWS = old


def queries(vectors: np.ndarray, n: int, seed: int) -> list[np.ndarray]:
    """Queries near rows (as real queries are) and random ones."""
    rng = np.random.default_rng(seed)
    near = [unit(vectors[i] + 0.3 * rng.standard_normal(384))
            for i in rng.integers(0, len(vectors), n)]
    return near + [unit(rng.standard_normal(384)) for _ in range(n)]


def test_every_exact_score_lies_within_its_bound(matrix):
    vectors, scr = matrix
    for q in queries(vectors, 5, 3):
        approx, eps = int8_screen.bounds(scr, q)
        exact = vectors @ q
        assert np.all(np.abs(exact - approx) <= eps)
        assert np.median(eps) < 0.1  # a bound this loose would screen nothing out


@pytest.mark.parametrize("k", [1, 10, 100])
def test_candidates_hold_the_exact_top_k(matrix, k):
    vectors, scr = matrix
    rng = np.random.default_rng(k)
    for q in queries(vectors, 5, k):
        for allowed in (None, rng.choice(len(vectors), 700, replace=False),
                        np.arange(k // 2 + 1)):
            pool = np.arange(len(vectors)) if allowed is None else allowed
            exact = vectors[pool] @ q
            top = set(pool[np.argsort(-exact, kind="stable")[:k]].tolist())
            found = int8_screen.candidates(scr, q, k, allowed)
            if found is None:  # allowed: the bound cannot narrow a small pool to a quarter
                assert len(pool) < 20 * k
                continue
            assert top <= set(found.tolist())
            assert set(found.tolist()) <= set(pool.tolist())
    assert len(int8_screen.candidates(scr, queries(vectors, 1, 0)[0], 10)) < len(vectors) / 4


def test_rows_too_alike_to_separate_ask_for_the_full_scan():
    rng = np.random.default_rng(4)
    vectors = unit(np.ones(384) + 1e-3 * rng.standard_normal((2000, 384)))
    scr = _built(vectors)
    assert int8_screen.candidates(scr, vectors[0], 10) is None
    assert int8_screen.bounds(scr, np.zeros(384, dtype=np.float32)) is None


def test_small_matrices_are_not_screened():
    assert int8_screen.build(unit(np.random.default_rng(0).standard_normal((100, 384)))) is None
