"""Readers in other processes never fail while builds add, edit, delete and clean up."""

from __future__ import annotations

import pytest

from tests.reliability import readers

pytestmark = [pytest.mark.model, pytest.mark.slow]


def test_readers_see_only_committed_rows_and_never_fail(tmp_path):
    report = readers.run(tmp_path, rounds=2, methods=("lexical", "hybrid"))
    assert report["errors"] == []
    assert report["searches"] > 0
    assert report["unknown_ids"] == []
