"""Issue 37, items 1, 3 and 6: every read of a vault file during a build is confined.

The walk refused symlinks but the reader followed them: another user with
write access to a shared vault swapped a note for a link to one of the victim's
mode-600 files after the walk, and the build indexed it (and `status --check`
said fresh). A FIFO swapped in hung the build while it held the lock; a file
that grew after the walk bypassed ``max_file_bytes``. Each swap here happens at
the last moment before the build opens the file (inside ``open_beneath``).
"""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.conftest import run_vq, write_config
from vq.core import confined, store
from vq.core.lock import holder_file
from vq.core.settings import load_settings
from vq.jobs.runner import locked_build

OPEN = confined.open_beneath
SECRET = "the launch code is walrus-kumquat"


@pytest.fixture
def shared(tmp_path, test_models):
    """A vault with one note, a private file outside it, and a config using the test encoder."""
    root = tmp_path / "shared"
    root.mkdir()
    (root / "note.md").write_text("# Note\n\nOrdinary words about teapots.\n")
    secret = tmp_path / "home" / "secret.md"
    secret.parent.mkdir()
    secret.write_text(f"# Private\n\n{SECRET}\n")
    secret.chmod(0o600)
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                             "model": test_models,
                                             "vaults": {"v": {"path": str(root)}}})
    return root, secret, cfg


def swap_before_open(monkeypatch, swap):
    """Run ``swap()`` once, just before the build opens its first vault file."""
    original, done = confined.open_beneath, []

    def racing(*args, **kwargs):
        if not done:
            done.append(swap())
        return original(*args, **kwargs)

    monkeypatch.setattr(confined, "open_beneath", racing)


def indexed_text(tmp_path) -> str:
    index = store.open_index(str(tmp_path / "index"))
    return " ".join(index.chunks.search().select(["text"]).limit(None).to_arrow()["text"]
                    .to_pylist())


def test_a_file_swapped_for_a_symlink_after_the_walk_is_refused_not_read(
        tmp_path, shared, monkeypatch):
    root, secret, cfg = shared
    note = root / "note.md"
    st = note.stat()

    def swap():
        note.rename(tmp_path / "note.bak")
        note.symlink_to(secret)

    swap_before_open(monkeypatch, swap)
    summary = locked_build(load_settings(str(cfg)))
    assert summary.outcome == "ok"
    assert [(p["path"], "symlink" in p["reason"]) for p in summary.problems] == [
        ("note.md", True)]
    assert SECRET not in indexed_text(tmp_path)
    # the attacker puts the note back as it was: the index must not look fresh
    note.unlink()
    (tmp_path / "note.bak").rename(note)
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    monkeypatch.setattr(confined, "open_beneath", OPEN)
    check = run_vq("--config", cfg, "status", "--check", "--json")
    assert check.returncode == 1, check.stdout
    assert [s["path"] for s in json.loads(check.stdout)["stale"]] == ["note.md"]
    again = locked_build(load_settings(str(cfg)))
    assert again.problems == [] and "teapots" in indexed_text(tmp_path)
    assert run_vq("--config", cfg, "status", "--check").returncode == 0


def test_a_vault_root_swapped_for_a_symlink_is_refused(tmp_path, shared, monkeypatch):
    root, secret, cfg = shared
    (secret.parent / "note.md").write_text(f"# Also private\n\n{SECRET}\n")

    def swap():
        root.rename(tmp_path / "shared.bak")
        root.symlink_to(secret.parent)

    swap_before_open(monkeypatch, swap)
    summary = locked_build(load_settings(str(cfg)))
    assert [p["path"] for p in summary.problems] == ["note.md"]
    assert "symlink" in summary.problems[0]["reason"]
    assert SECRET not in indexed_text(tmp_path)


def test_a_vault_root_that_another_user_made_a_symlink_is_not_followed(tmp_path, shared):
    """Swapped before the walk: the link itself belongs to the attacker."""
    if os.geteuid() != 0:
        pytest.skip("the link must belong to another uid: lchown needs root")
    root, secret, cfg = shared
    root.rename(tmp_path / "shared.bak")
    root.symlink_to(secret.parent)
    os.lchown(root, 65534, -1)  # nobody
    summary = locked_build(load_settings(str(cfg)))
    assert summary.missing_roots == ["v"]
    assert [(p["path"], "owned by another user" in p["reason"])
            for p in summary.problems] == [(".", True)]
    assert not (tmp_path / "index" / "chunks.lance").exists() or \
        SECRET not in indexed_text(tmp_path)


def test_a_fifo_swapped_in_after_the_walk_is_one_files_error_not_a_hang(
        tmp_path, shared, monkeypatch):
    root, _, cfg = shared
    note = root / "note.md"

    def swap():
        note.unlink()
        os.mkfifo(note)

    swap_before_open(monkeypatch, swap)
    summary = locked_build(load_settings(str(cfg)))  # on main: blocks forever in open()
    assert summary.outcome == "ok"
    assert [(p["path"], "no longer a regular file" in p["reason"])
            for p in summary.problems] == [("note.md", True)]


def test_a_file_that_grows_after_the_walk_is_not_read_past_what_the_walk_saw(
        tmp_path, shared, monkeypatch):
    root, _, cfg = shared
    note = root / "note.md"

    def grow():
        with note.open("a") as fh:
            fh.write("x" * 100_000)

    swap_before_open(monkeypatch, grow)
    summary = locked_build(load_settings(str(cfg)))
    assert [(p["path"], "grew while the build ran" in p["reason"])
            for p in summary.problems] == [("note.md", True)]
    assert "x" * 1000 not in indexed_text(tmp_path)
    monkeypatch.setattr(confined, "open_beneath", OPEN)
    again = locked_build(load_settings(str(cfg)))  # the next build reads it whole
    assert again.problems == [] and "x" * 1000 in indexed_text(tmp_path)


def test_a_symlink_inside_the_vault_is_still_indexed_at_its_target(tmp_path, shared):
    """A link to a file the walk does not index (a dot folder) is indexed at its target;
    a link to one it does index (zod's CLAUDE.md -> AGENTS.md) would be every hit twice."""
    from vq.query.search import Query, search

    root, _, cfg = shared
    (root / ".hidden").mkdir()
    (root / ".hidden" / "real.md").write_text("# Real\n\nThe pelican note.\n")
    (root / "alias.md").symlink_to(root / ".hidden" / "real.md")
    (root / "AGENTS.md").write_text("# Agents\n\nRun the tests before a commit.\n")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    (root / "twice.md").symlink_to(root / ".hidden" / "real.md")
    summary = locked_build(load_settings(str(cfg)))
    assert summary.problems == [] and summary.files_new == 3  # note.md, alias.md, AGENTS.md
    assert summary.skipped["symlink to an indexed file"] == 2  # CLAUDE.md, twice.md
    hits = search(load_settings(str(cfg)), Query("run the tests before a commit",
                                                 method="lexical", limit=5)).hits
    assert hits[0].path == "AGENTS.md" and "CLAUDE.md" not in [h.path for h in hits]


def test_a_build_holding_the_lock_far_too_long_is_reported(tmp_path, shared, cli):
    _, _, cfg = shared
    assert locked_build(load_settings(str(cfg))).outcome == "ok"
    lock = load_settings(str(cfg)).build_lock
    holder_file(lock).write_text(json.dumps({"pid": os.getpid(), "since": time.time() - 7200}))
    status = cli("--config", cfg, "status")
    assert "held by pid" in status.stdout and "may be hung" in status.stdout
    assert f"kill {os.getpid()}" in status.stdout
    assert json.loads(cli("--config", cfg, "status", "--json").stdout)["lock_warning"]
    doctor = json.loads(cli("--config", cfg, "doctor", "--json").stdout)
    check = next(c for c in doctor["checks"] if c["name"] == "build lock")
    assert check["status"] == "warn" and f"kill {os.getpid()}" in check["next"]
    holder_file(lock).write_text(json.dumps({"pid": os.getpid(), "since": time.time() - 60}))
    assert "may be hung" not in cli("--config", cfg, "status").stdout
    cfg.write_text(cfg.read_text() + "build_max_seconds: 30\n")
    assert "may be hung" in cli("--config", cfg, "status").stdout
