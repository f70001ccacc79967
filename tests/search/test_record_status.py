"""A decision record that no longer holds says so on its hits: read from the record when
shown, in each format records keep their status, on every surface."""

from __future__ import annotations

import json

import pytest

from tests.conftest import build_and_search
from vq.query.record_status import closed_status

NYGARD = """# 2. Minimum supported Python version

Date: 2019-05-13

## Status

Superseded by [ADR-0020](./0020-minimum-supported-python-version.md)

## Context

Home Assistant sets the minimum Python requirement to the penultimate minor version.
"""


@pytest.mark.parametrize(("text", "status"), [
    (NYGARD, "Superseded by ADR-0020"),
    ("# Use X\n\n* Status: deprecated\n* Date: 2020-01-01\n\n## Context\n\nWords.\n",
     "deprecated"),
    ("---\nstatus: \"rejected\"\ndate: 2021-02-03\n---\n\n# Use Y\n", "rejected"),
    ("# 3. Use Z\n\n## **Status**\n\nPartly superseded by 0007.\n", "Partly superseded by 0007."),
    ("# Use W\n\n## Status\n\nAccepted\n\n## Context\n\nThe old design was superseded.\n", ""),
    ("# Plain note\n\nNothing about status here; superseded is a word.\n", ""),
    ("# Use V\n\n## Status\n\n## Context\n\nRejected ideas are listed below.\n", ""),
    ("# API\n\n```yaml\nstatus: deprecated\n```\n\nStatus: accepted\n", ""),
])
def test_a_closed_status_is_read_and_an_open_one_is_not_said(text, status):
    assert closed_status(text) == status


def test_a_superseded_record_says_so_on_every_hit_of_it(tmp_path, build, cli):
    """Home Assistant's ADR 0002, superseded by 0020, ranked second for "minimum
    supported python version policy" and its Context fourth, saying nothing of it."""
    files = {"0002-minimum-python.md": NYGARD,
             "0020-minimum-python.md": NYGARD.replace("# 2.", "# 20.").replace(
                 "Superseded by [ADR-0020](./0020-minimum-supported-python-version.md)",
                 "Accepted")}
    hits = build_and_search(tmp_path, build, cli, files, "notes", "minimum python version")
    status = {(h["path"], h["start_line"]): h.get("status") for h in hits}
    assert {s for (p, _), s in status.items() if p.startswith("0002")} == \
        {"Superseded by ADR-0020"}, status
    assert {s for (p, _), s in status.items() if p.startswith("0020")} == {None}, status
    shown = cli("--config", tmp_path / "vq.yaml", "search", "minimum python version")
    assert "[Superseded by ADR-0020]" in shown.stdout
    # read beneath the vault only: a record swapped for a link to elsewhere says nothing
    outside = tmp_path / "outside.md"
    outside.write_text(NYGARD)
    record = tmp_path / "vault" / "0002-minimum-python.md"
    record.unlink()
    record.symlink_to(outside)
    again = json.loads(cli("--config", tmp_path / "vq.yaml", "search", "--json",
                           "minimum python version").stdout)
    assert not [h for h in again if h.get("status")], again
