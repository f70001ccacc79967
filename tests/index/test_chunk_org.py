"""Org mode notes (org-roam, journals) chunk by heading, like Markdown, with the file's lines."""

from __future__ import annotations

import pytest

from tests.conftest import build_and_search
from vq.indexer.handlers import Limits, handler_for
from vq.indexer.handlers.org import org_handler, plain, scan

NOTE = """\
:PROPERTIES:
:ID:       5b1e4a2c-9d7f-4f3e-8a61-0c2d9e7b4f11
:END:
#+title: Backup strategy
#+filetags: :infra:backups:
#+date: <2024-03-05 Tue>

Nightly snapshots of every volume.
# a comment nobody reads rendered

* TODO [#A] Restic to object storage [1/3]                              :work:
:PROPERTIES:
:CREATED:  [2024-03-05 Tue 10:12]
:END:
Restic sends encrypted snapshots to the bucket.

#+begin_src shell
restic -r s3:backups backup /srv
* a star line in a block is a heading to Org
#+end_src

** DONE Retention [[https://restic.readthedocs.io/][policy]]
Keep 7 daily, 4 weekly and 12 monthly snapshots.

#+begin_comment
* a commented-out heading is still a heading to Org
#+end_comment

* Restore drills
Restore one volume each month.
"""


def test_headings_blocks_and_hidden_lines():
    page = scan(NOTE.split("\n"))
    assert [(h.line + 1, h.level, h.text) for h in page.headings] == [
        (11, 1, "Restic to object storage"),
        (19, 1, "a star line in a block is a heading to Org"),
        (22, 2, "Retention policy"),
        (26, 1, "a commented-out heading is still a heading to Org"),
        (29, 1, "Restore drills")]
    hidden = {i + 1 for i in page.hidden}
    assert {1, 2, 3, 4, 5, 6, 9, 12, 13, 14} <= hidden  # drawers, keywords, the comment
    assert page.keywords["title"] == "Backup strategy"


def test_sections_carry_breadcrumbs_metadata_and_the_files_own_line_numbers():
    doc = org_handler(NOTE, "roam/20240305-backups.org", Limits())
    assert (doc.title, doc.tags, doc.date) == ("Backup strategy", ("infra", "backups"),
                                                "2024-03-05")
    got = [(c.start_line, c.breadcrumb) for c in doc.chunks]
    assert got[0] == (8, "Backup strategy")  # no drawer, no keyword lines
    assert (11, "Backup strategy > Restic to object storage") in got
    assert (22, "Backup strategy > a star line in a block is a heading to Org"
            " > Retention policy") in got
    assert got[-1] == (29, "Backup strategy > Restore drills")
    lines = NOTE.split("\n")
    for chunk in doc.chunks:  # the file's lines, metadata blanked
        shown = chunk.text.split("\n")
        for got_line, line in zip(shown, lines[chunk.start_line - 1:chunk.end_line],
                                   strict=True):
            assert got_line in (line, "")
        assert "5b1e4a2c" not in chunk.text and "#+title" not in chunk.text


def test_a_heading_reads_as_a_reader_scans_it():
    assert plain("TODO [#B] Write the report [40%] :work:q3:") == "Write the report"
    assert plain("DONE See [[file:other.org][the other note]]") == "See the other note"
    assert plain("Ratio 3:2 stays") == "Ratio 3:2 stays"
    assert plain("TODOS are words") == "TODOS are words"


def test_an_unclosed_drawer_is_text_and_hides_nothing():
    doc = org_handler("* Note\n:LOGBOOK:\nstill text\n* Next\nmore\n", "n.org", Limits())
    assert "still text" in doc.chunks[0].text


def test_a_file_of_unclosed_drawers_is_read_in_one_pass_and_kept_as_text():
    """Each ``:name:`` line opens a drawer; searching for its ``:END:`` from every line
    read a 5,000-line file 5,000 times (2.6 s; 50,000 lines would take minutes)."""
    text = ":LOGBOOK:\n" * 20_000 + "* Heading\n:END:\n"
    doc = org_handler(text, "hostile.org", Limits())
    assert sum(c.text.count(":LOGBOOK:") for c in doc.chunks) == 20_000


def test_org_files_have_their_own_handler():
    assert handler_for("roam/daily/2024-03-05.org")[0] == "org"


@pytest.mark.model
def test_an_org_note_is_searchable_by_heading_with_its_tags(tmp_path, build, cli):
    """An org-roam vault: a hit names its heading, carries the note's tags, and no
    property-drawer UUID is in what a search shows."""
    hits = build_and_search(tmp_path, build, cli, {"20240305-backups.org": NOTE + "\n".join(
        f"Drill {n}: restore a volume from last month's snapshot and compare checksums."
        for n in range(40))}, "notes", "--tag", "backups", "restore a volume from a snapshot")
    assert hits[0]["breadcrumb"] == "Backup strategy > Restore drills"
    assert sum(h["breadcrumb"].endswith("Restore drills") for h in hits) == 1
    assert not any("5b1e4a2c" in h.get("snippet", "") for h in hits)
