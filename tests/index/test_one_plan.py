"""`vq build`, `vq status --check` and `vq doctor` share one plan, so they cannot disagree.

Each case used to split them: a build killed right after marking a file pending
left `status --check` stale forever while doctor said ✓ and no build repaired it;
a new file over ``max_file_bytes`` was stale to one and invisible to the other;
an index inside a vault indexed itself; ``6m`` meant minutes in one flag and
months in another.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.conftest import write_config, write_tree
from vq.core import store
from vq.core.settings import load_settings

pytestmark = pytest.mark.model


def check(cli, config, *extra) -> tuple[int, dict]:
    result = cli("--config", config, "status", "--check", "--json", *extra)
    return result.exit_code, json.loads(result.stdout)


def doctor_freshness(cli, config) -> dict:
    result = cli("--config", config, "doctor", "--no-model", "--json")
    return next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "freshness")


def manifest(settings, path: str) -> dict:
    index = store.open_index(settings.index_dir)
    rows = index.files.search().where(f"path = '{path}'").limit(None).to_arrow().to_pylist()
    assert len(rows) == 1, rows
    return rows[0]


def chunk_count(settings, path: str) -> int:
    return store.open_index(settings.index_dir).chunks.count_rows(f"path = '{path}'")


@pytest.mark.parametrize("chunks_deleted", [False, True],
                         ids=["killed-after-mark", "killed-after-delete"])
def test_a_build_killed_after_marking_a_file_pending_is_repaired(
        built, build, cli, vault, chunks_deleted):
    from vq.indexer import write

    path, key = vault / "errors.md", ("notes", "errors.md")
    original, st = path.read_bytes(), path.stat()
    chunks = chunk_count(built, "errors.md")
    # The build that died: the file had been edited, the build blanked its hash
    # (and maybe deleted its chunks), then was killed before the new rows landed.
    path.write_text("# Error codes\n\nRewritten while a build ran.\n")
    index = store.open_index(built.index_dir)
    write.mark_pending(index, [key])
    if chunks_deleted:
        write.delete_chunks(index, [key])
    # The edit is undone: same bytes, the size and mtime the manifest still records.
    path.write_bytes(original)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (manifest(built, "errors.md")["size"], manifest(built, "errors.md")["mtime_ns"]
            ) == (st.st_size, st.st_mtime_ns)

    code, data = check(cli, built.config_file)
    assert (code, data["stale"]) == (1, [{"vault": "notes", "path": "errors.md",
                                          "reason": "unfinished"}])
    warned = doctor_freshness(cli, built.config_file)
    assert warned["status"] == "warn" and "1 unfinished" in warned["detail"]

    summary = build(built)
    assert summary.files_new + summary.files_changed == 1 and summary.files_unchanged == 3
    assert manifest(built, "errors.md")["hash"] and chunk_count(built, "errors.md") == chunks
    code, data = check(cli, built.config_file)
    assert (code, data["fresh"], data["stale"]) == (0, True, [])
    assert doctor_freshness(cli, built.config_file)["status"] == "ok"
    found = cli("--config", built.config_file, "search", "--method", "lexical", "--json", "E4711")
    assert [h["path"] for h in json.loads(found.stdout)] == ["errors.md"]


def test_a_file_over_max_file_bytes_is_reported_alike(tmp_path, vault, build, cli):
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "max_file_bytes": 4000,
        "vaults": {"notes": {"path": str(vault)}}})
    settings = load_settings(str(config))
    assert build(settings).outcome == "ok"
    (vault / "huge.md").write_text("# Huge\n\n" + "words and more words\n" * 400)

    code, data = check(cli, config)
    assert (code, data["stale"]) == (1, [{"vault": "notes", "path": "huge.md", "reason": "new"}])
    warned = doctor_freshness(cli, config)
    assert warned["status"] == "warn" and "1 new" in warned["detail"]

    summary = build(settings)
    assert summary.files_errored == 1 and "max_file_bytes" in summary.problems[0]["reason"]
    code, data = check(cli, config)
    assert (code, data["stale"], data["errors"]) == (0, [], 1)
    fresh = doctor_freshness(cli, config)
    assert fresh["status"] == "ok" and fresh["detail"].startswith(f"{data['files']} files")
    assert build(settings).files_errored == 1  # still reported, nothing rewritten

    (vault / "huge.md").write_text("# Huge\n\n" + "words and more words\n" * 500)
    code, data = check(cli, config)
    assert (code, data["stale"]) == (1, [{"vault": "notes", "path": "huge.md",
                                          "reason": "changed"}])
    assert "1 changed" in doctor_freshness(cli, config)["detail"]


def test_an_index_inside_its_vault_never_indexes_itself(tmp_path, vault, build, cli):
    """index_dir (with its extract cache and lock) and a configured lock_path inside the
    vault: the walk skips them, so a second build has nothing to do and the check is fresh."""
    write_tree(vault, {"page.html": "<html><title>Page</title><body><p>Canary deploys "
                                    "and rollback.</p></body></html>"})
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(vault / "search-index"), "lock_path": str(vault / "locks" / "b.txt"),
        "vaults": {"notes": {"path": str(vault)}}})
    settings = load_settings(str(config))
    first = build(settings)
    assert first.outcome == "ok" and first.files_seen == 5
    assert any((vault / "search-index" / "extract-cache").iterdir())  # the HTML was cached
    assert (vault / "locks" / "b.txt").exists()
    second = build(settings)
    assert (second.files_seen, second.files_new, second.chunks_encoded) == (5, 0, 0)
    assert second.skipped["vq's own files"] == 3  # the index, the lock, its holder file
    code, data = check(cli, config)
    assert (code, data["stale"], data["files"]) == (0, [], 5)
    index = store.open_index(settings.index_dir)
    paths = index.files.search().select(["path"]).limit(None).to_arrow()["path"].to_pylist()
    assert not [p for p in paths if p.startswith(("search-index/", "locks/"))]


def test_since_and_max_age_read_6m_as_six_minutes(tmp_path, vault, build, cli):
    from vq.core.durations import parse_duration
    from vq.query.filters import parse_since

    now = time.time()
    assert parse_duration("6m", "--max-age") == 360 == now - parse_since("6m", now)[1]
    assert parse_duration("6mo") == 180 * 86400 == now - parse_since("6mo", now)[1]
    old = vault / "cooking.md"  # "dough" is only here
    os.utime(old, (now - 600, now - 600))  # ten minutes ago
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "vaults": {"notes": {"path": str(vault)}}})
    build(load_settings(str(config)))

    def hits(since: str) -> list[str]:
        result = cli("--config", config, "search", "--method", "lexical", "--json",
                     "--since", since, "dough")
        return [h["path"] for h in json.loads(result.stdout)] if result.exit_code == 0 else []

    assert hits("6m") == [] and hits("11m") == ["cooking.md"] and hits("6mo") == ["cooking.md"]
    code, data = check(cli, config, "--max-age", "6m")
    assert (code, data["max_age_seconds"]) == (0, 360)
    search_help = cli("search", "--help").output
    status_help = cli("status", "--help").output
    assert "m is minutes" in search_help and "m is minutes" in status_help
