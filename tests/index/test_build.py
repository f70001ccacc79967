"""The incremental build against a real LanceDB and the real model."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import write_config
from vq.core import store
from vq.core.errors import IndexMismatch
from vq.core.settings import load_settings
from vq.jobs.runner import Skipped

pytestmark = pytest.mark.model


def chunk_rows(settings, where=None):
    index = store.open_index(settings.index_dir)
    q = index.chunks.search()
    if where:
        q = q.where(where)
    cols = ["id", "vault", "path", "start_line", "end_line", "breadcrumb", "text_hash"]
    return sorted(q.select(cols).limit(None).to_arrow().to_pylist(), key=lambda r: r["id"])


def test_first_build_indexes_every_file_with_exact_lines(built, vault):
    rows = chunk_rows(built, "path = 'deploy.md'")
    by_crumb = {r["breadcrumb"]: r for r in rows}
    rollback = by_crumb["Deploying the service > Rollback"]
    lines = (vault / "deploy.md").read_text().splitlines()
    assert lines[rollback["start_line"] - 1] == "## Rollback"
    assert lines[rollback["end_line"] - 1].endswith("for one release.")
    index = store.open_index(built.index_dir)
    assert index.meta.model == "all-MiniLM-L6-v2" and index.meta.dim == 384
    assert index.files.count_rows() == 4


def test_noop_rebuild_reads_and_encodes_nothing(built, build):
    s = build(built)
    assert (s.files_unchanged, s.files_new, s.files_changed, s.chunks_encoded) == (4, 0, 0, 0)


def test_edit_one_section_encodes_exactly_one_chunk(built, build, vault):
    before = {r["breadcrumb"]: r for r in chunk_rows(built, "path = 'deploy.md'")}
    path = vault / "deploy.md"
    path.write_text(path.read_text().replace("twenty minutes", "thirty minutes"))
    s = build(built)
    assert (s.files_changed, s.chunks_encoded) == (1, 1)
    assert s.chunks_reused == len(before) - 1
    after = {r["breadcrumb"]: r for r in chunk_rows(built, "path = 'deploy.md'")}
    assert after.keys() == before.keys()
    changed = [k for k in after if after[k]["text_hash"] != before[k]["text_hash"]]
    assert changed == ["Deploying the service > Rollout"]


def test_touch_without_change_only_restamps(built, build, vault):
    path = vault / "cooking.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    s = build(built)
    assert (s.files_restamped, s.chunks_encoded, s.files_changed) == (1, 0, 0)
    assert build(built).files_restamped == 0  # the new mtime was recorded


def test_shorter_file_and_deleted_file_leave_no_orphans(built, build, vault):
    (vault / "deploy.md").write_text("# Deploying the service\n\nJust push.\n")
    (vault / "cooking.md").unlink()
    s = build(built)
    assert s.files_deleted == 1
    assert not chunk_rows(built, "path = 'cooking.md'")
    assert [r["start_line"] for r in chunk_rows(built, "path = 'deploy.md'")] == [1]
    index = store.open_index(built.index_dir)
    assert index.files.count_rows("path = 'cooking.md'") == 0


def test_missing_root_is_reported_not_pruned_and_removed_vault_is(tmp_path, build, vault,
                                                                 code_vault):
    cfg = write_config(tmp_path / "two.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"notes": {"path": str(vault)}, "code": {"path": str(code_vault),
                                                           "kind": "code"}}})
    settings = load_settings(str(cfg))
    build(settings)
    assert chunk_rows(settings, "vault = 'code'")
    code_vault.rename(tmp_path / "unmounted")
    s = build(settings)
    assert s.missing_roots == ["code"] and s.files_deleted == 0
    assert chunk_rows(settings, "vault = 'code'")  # an unmounted disk loses nothing
    write_config(cfg, {"index_dir": str(tmp_path / "index"),
                       "vaults": {"notes": {"path": str(vault)}}})
    s = build(load_settings(str(cfg)))
    assert s.pruned_vaults == ["code"] and not chunk_rows(settings, "vault = 'code'")
    assert s.line().endswith(", removed vaults no longer configured: code"), s.line()


def test_bad_files_are_recorded_and_the_rest_indexed(built, build, vault):
    (vault / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    (vault / "blob.md").write_bytes(b"\x00\x01\x02binary")
    (vault / "gone.md").symlink_to(vault / "does-not-exist.md")
    (vault / "fine.md").write_text("# Fine\n\nAll good here.\n")
    s = build(built)
    reasons = {p["path"]: p["reason"] for p in s.problems}
    assert "not valid UTF-8 (line 1" in reasons["latin1.md"]
    assert "binary" in reasons["blob.md"]
    assert "broken symlink" in reasons["gone.md"]
    assert chunk_rows(built, "path = 'fine.md'")
    index = store.open_index(built.index_dir)
    errors = index.files.search().where("error IS NOT NULL").limit(None).to_arrow()
    assert sorted(errors["path"].to_pylist()) == ["blob.md", "gone.md", "latin1.md"]


def test_unreadable_edit_keeps_previously_indexed_chunks(built, build, vault):
    before = chunk_rows(built, "path = 'cooking.md'")
    (vault / "cooking.md").write_bytes(b"# Bread\n\xff\xfe broken\n")
    s = build(built)
    assert s.files_errored == 1
    assert chunk_rows(built, "path = 'cooking.md'") == before
    (vault / "cooking.md").write_text("# Bread\n\nFixed.\n")
    assert build(built).files_changed == 1  # the error is retried and cleared


def test_other_model_is_refused_until_rebuild(built, build):
    from dataclasses import replace

    other = replace(built, model="/models/other-model")
    with pytest.raises(IndexMismatch, match="built with model 'all-MiniLM-L6-v2'") as err:
        build(other)
    assert "--rebuild" in err.value.fix
    assert store.open_index(built.index_dir).chunks.count_rows() > 0  # nothing touched


def test_row_added_after_fts_index_is_found_lexically(built, build, vault):
    from vq.query.search import Query, search

    (vault / "late.md").write_text("# Late\n\nThe zorblax frobnicator arrived late.\n")
    build(built)
    hits = search(built, Query("zorblax", method="lexical")).hits
    assert [h.path for h in hits] == ["late.md"]


def test_build_skips_when_another_process_holds_the_lock(built, build, cli, config_file):
    lock = built.build_lock
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, filelock
        lock = filelock.FileLock({str(lock)!r}, timeout=0)
        lock.acquire()
        print("held", flush=True)
        sys.stdin.readline()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert isinstance(build(built), Skipped)
        result = cli("--config", config_file, "build")
        assert result.exit_code == 0
        assert "skipped: another build holds the lock" in result.stderr
        waited = cli("--config", config_file, "build", "--wait", "0.2")
        assert waited.exit_code == 3 and "gave up" in waited.stderr
    finally:
        holder.communicate("\n", timeout=30)
    assert not isinstance(build(built), Skipped)  # released when the holder exits


def test_builds_log_is_trimmed_and_compacted(built, build, monkeypatch):
    """Every build appends a record: left alone, months of cron builds would leave one
    fragment and one version each. Past the threshold the log keeps the newest rows."""
    from vq.core import builds as log
    from vq.core.builds import last_build

    monkeypatch.setattr(log, "BUILDS_COMPACT_AT", 4)
    monkeypatch.setattr(log, "BUILD_HISTORY", 2)
    starts = []
    for _ in range(3):  # with the fixture's build: 4 records, the third of these trims
        build(built)
        starts.append(last_build(store.open_index(built.index_dir))["started_at"])
    builds = store.open_index(built.index_dir).builds
    assert builds.stats()["fragment_stats"]["num_fragments"] == 1
    kept = sorted(builds.search().select(["started_at"]).limit(None).to_arrow()["started_at"]
                  .to_pylist())
    assert kept == starts[-2:] and starts == sorted(starts)
    assert last_build(store.open_index(built.index_dir))["started_at"] == starts[-1]


def test_stop_words_are_indexed_and_an_old_fts_index_is_rebuilt(built, build, vault):
    """"not" and "off" are on LanceDB's stop-word list but mean something in notes; an
    index whose FTS index dropped them gets a new FTS index, and nothing re-encoded."""
    from lancedb.index import FTS

    from vq.indexer import maintain
    from vq.query.search import Query, search

    (vault / "flags.md").write_text("# Flags\n\nturn it off and do not restart\n")
    build(built)
    index = store.open_index(built.index_dir)
    index.chunks.create_index("text", config=FTS(), replace=True)  # as vq built it before
    assert maintain.fts_outdated(store.open_index(built.index_dir).chunks)
    assert search(built, Query("off not", method="lexical")).hits == []
    summary = build(built)
    assert summary.chunks_encoded == 0
    assert not maintain.fts_outdated(store.open_index(built.index_dir).chunks)
    hits = search(built, Query("off not", method="lexical")).hits
    assert [h.path for h in hits] == ["flags.md"]
