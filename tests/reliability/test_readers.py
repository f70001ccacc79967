"""Readers in other processes never fail while builds add, edit, delete and clean up.

Writers and readers use the test encoder: hybrid readers still encode every query
and search vectors, without each process loading the model first."""

from __future__ import annotations

import pytest

from tests.reliability import readers

pytestmark = pytest.mark.slow


def test_readers_see_only_committed_rows_and_never_fail(tmp_path, test_models):
    report = readers.run(tmp_path, rounds=2, methods=("lexical", "hybrid"), model=test_models)
    assert report["errors"] == []
    assert report["searches"] > 0
    assert report["unknown_ids"] == []
