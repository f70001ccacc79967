"""Fusion arithmetic: pure functions, no index."""

from __future__ import annotations

import pytest

from vq.query import fusion


def test_rrf_sums_reciprocal_ranks():
    scores = fusion.rrf({"bm25": ["a", "b"], "dense": ["b", "c"]}, k=60)
    assert scores == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})


def test_convex_normalises_each_pool_and_weights_it():
    pools = {"bm25": {"a": 10.0, "b": 5.0, "c": 0.0}, "dense": {"b": 0.9, "c": 0.5, "d": 0.1}}
    scores = fusion.convex(pools, {"bm25": 0.3, "dense": 0.7}, zero_floor=False)
    assert scores == pytest.approx({"a": 0.3, "b": 0.3 * 0.5 + 0.7 * 1.0,
                                    "c": 0.7 * 0.5, "d": 0.0})
    floored = fusion.convex(pools, {"bm25": 0.3, "dense": 0.7})
    assert floored == pytest.approx({"a": 0.3, "b": 0.3 * 0.5 + 0.7 * 1.0,
                                     "c": 0.7 * 0.5 / 0.9, "d": 0.7 * 0.1 / 0.9})


def test_a_negative_cosine_counts_as_no_match():
    assert fusion.convex({"dense": {"a": 0.5, "b": -0.2}}, {"dense": 1.0}) == \
        pytest.approx({"a": 1.0, "b": 0.0})


def test_convex_keeps_a_strong_single_signal_hit_above_two_mediocre_ones():
    """The issue's case: RRF puts a doc both signals rank 20th above one a signal
    ranks 2nd and the other misses; the convex fusion does not."""
    bm25 = {f"x{i}": 100.0 - 5 * i for i in range(1, 21)}
    dense = {f"y{i}": 0.9 - 0.02 * i for i in range(1, 21)}
    bm25["both"], dense["both"] = bm25.pop("x20"), dense.pop("y20")
    rrf = fusion.ranked(fusion.rrf({"bm25": fusion.ranked(bm25), "dense": fusion.ranked(dense)}))
    assert rrf.index("both") < rrf.index("x2")
    convex = fusion.ranked(fusion.convex({"bm25": bm25, "dense": dense},
                                         {"bm25": 0.5, "dense": 0.5}))
    assert convex.index("x2") < convex.index("both")


def test_a_pool_of_equal_scores_gives_full_weight_and_empty_pools_are_ignored():
    for floor in (True, False):
        assert fusion.convex({"bm25": {"a": 3.0, "b": 3.0}, "dense": {}},
                             {"bm25": 0.4, "dense": 0.6}, floor) == \
            pytest.approx({"a": 0.4, "b": 0.4})


def test_weight_one_is_the_signal_alone():
    pools = {"bm25": {"a": 2.0, "b": 1.0, "c": 0.5}, "dense": {"c": 0.9, "b": 0.2}}
    alone = fusion.ranked(fusion.convex(pools, {"bm25": 1.0, "dense": 0.0}))
    assert alone == fusion.ranked(pools["bm25"])


def test_ties_rank_by_id():
    assert fusion.ranked({"b": 1.0, "c": 2.0, "a": 1.0}) == ["c", "a", "b"]


def test_one_piece_per_section_keeps_the_best_ranked_piece():
    section = {"a1": "A", "b1": "B", "a2": "A", "c1": "C", "b2": "B"}
    assert fusion.one_per_section(["a1", "b1", "a2", "c1", "b2"], section) == ["a1", "b1", "c1"]


@pytest.mark.parametrize("data, key, words", [
    ({"search": {"fusion": "borda"}}, "search.fusion", "not one of"),
    ({"search": {"lexical_weight": 1.5}}, "search.lexical_weight", "out of range"),
    ({"search": {"lexical_weight": -0.1}}, "search.lexical_weight", "out of range"),
    ({"search": {"heading_boost": -1}}, "search.heading_boost", "out of range"),
    ({"search": {"heading_boost": "big"}}, "search.heading_boost", "expected float"),
])
def test_fusion_settings_are_validated(tmp_path, data, key, words):
    from tests.conftest import write_config
    from vq.core.errors import ConfigError
    from vq.core.settings import load_settings

    cfg = write_config(tmp_path / "bad.yaml", data)
    with pytest.raises(ConfigError) as err:
        load_settings(str(cfg))
    assert err.value.key == key and words in err.value.message and err.value.fix
