"""A tree of hostile inputs: the build completes, reports each problem once, indexes the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import run_vq, write_config
from vq.core import store
from vq.core.errors import ConfigError, IndexMismatch
from vq.core.schema import IndexMeta
from vq.core.settings import load_settings
from vq.core.walk import FileEntry

pytestmark = pytest.mark.model

GOOD = {
    "good.md": "# Good\n\nA perfectly ordinary note about kettles.\n",
    "empty.md": "",
    "only-frontmatter.md": "---\ntitle: Nothing else\ntags: [x]\n---\n",
    "long-lines.md": "# Long\n\n" + ("word " * 40_000) + "\n",
    "nested.md": "".join(f"{'#' * (i % 6 + 1)} Level {i}\n\ntext {i}\n\n" for i in range(200)),
    "with space é.md": "# Accents\n\nCafé crème in a file name with spaces.\n",
    "new\nline.md": "# Newline\n\nA file whose name holds a newline.\n",
}


@pytest.fixture
def hostile(tmp_path):
    root = tmp_path / "hostile"
    root.mkdir()
    for name, text in GOOD.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "latin1.md").write_bytes("# Caf\xe9 au lait\n".encode("latin-1"))
    (root / "mixed.md").write_bytes(b"# Mixed\n\nutf8 \xc3\xa9 then latin1 \xe9\n")
    (root / "binary.md").write_bytes(bytes(range(256)) * 4)
    # a parser's test suite of invalid encodings: test data on purpose, not an error
    (root / "tests" / "fixtures").mkdir(parents=True)
    (root / "tests" / "fixtures" / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    with open(root / "huge.md", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    (root / "loop-a.md").symlink_to(root / "loop-b.md")
    (root / "loop-b.md").symlink_to(root / "loop-a.md")
    (root / "dirloop").symlink_to(root)
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret outside the vault\n")
    (root / "escape.md").symlink_to(outside)
    (root / "locked.md").write_text("# Locked\n")
    (root / "locked.md").chmod(0)
    return root


def test_hostile_tree_builds_and_reports_each_problem_once(tmp_path, hostile, build, cli):
    cfg = write_config(tmp_path / "h.yaml", {"index_dir": str(tmp_path / "index"),
                                             "vaults": {"h": {"path": str(hostile)}}})
    summary = build(load_settings(str(cfg)))
    assert summary.outcome == "ok"
    reasons = {p["path"]: p["reason"] for p in summary.problems}
    assert len(reasons) == len(summary.problems)  # once each
    assert "not valid UTF-8" in reasons["latin1.md"] and "not valid UTF-8" in reasons["mixed.md"]
    assert "binary" in reasons["binary.md"]
    assert "too large" in reasons["huge.md"]
    assert "symlink loop" in reasons["loop-a.md"] and "loop-b.md" in reasons
    if os.geteuid() != 0:  # root reads anything, so the permission case only bites users
        assert "permission denied" in reasons["locked.md"]
    assert "escape.md" not in reasons and summary.skipped["symlink outside vault"] == 1
    assert "tests/fixtures/latin1.md" not in reasons and summary.skipped["fixture not text"] == 1
    index = store.open_index(str(tmp_path / "index"))
    indexed = set(index.chunks.search().select(["path"]).limit(None).to_arrow()["path"]
                  .to_pylist())
    assert {"good.md", "long-lines.md", "nested.md", "with space é.md", "new\nline.md"} <= indexed
    assert not indexed & {"escape.md", "dirloop/good.md", "only-frontmatter.md", "empty.md"}
    status = json.loads(cli("--config", cfg, "status", "--json").stdout)
    assert {e["path"] for e in status["errors"]} == set(reasons)
    version = index.files.version
    again = build(load_settings(str(cfg)))
    assert again.chunks_encoded == 0 and {p["path"] for p in again.problems} == set(reasons)
    assert store.open_index(str(tmp_path / "index")).files.version == version  # no rewrite


def test_file_deleted_between_walk_and_read_is_reported(built, vault):
    from vq.indexer.build import Builder
    from vq.indexer.engine import FileWork, chunk_files

    engine = Builder(built).engine
    ghost = FileEntry("notes", "ghost.md", vault / "ghost.md", 10, 1)
    pending, out = chunk_files(engine.chunker, engine.kinds, [FileWork(ghost, None)])
    assert (pending, out.keys) == ([], [])
    assert "deleted while the build ran" in out.manifest[0]["error"]


def test_index_from_another_schema_is_refused_and_untouched(tmp_path, settings, build):
    store.create_index(settings.index_dir, IndexMeta(model="all-MiniLM-L6-v2", dim=384,
                                                     schema_version=99))
    before = store.open_index(settings.index_dir).chunks.version
    with pytest.raises(IndexMismatch, match="schema version '99'"):
        build(settings)
    assert store.open_index(settings.index_dir).chunks.version == before


def test_malformed_config_changes_nothing_on_disk(tmp_path, built, cli, config_file):
    before = store.open_index(built.index_dir).chunks.version
    config_file.write_text(config_file.read_text() + "\nvaults: [broken\n")
    with pytest.raises(ConfigError):
        load_settings(str(config_file))
    result = cli("--config", config_file, "build")
    assert result.exit_code == 2 and "malformed YAML" in result.stderr
    assert store.open_index(built.index_dir).chunks.version == before


# Drops root's licence to read any file (CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH leave
# the bounding set, so the program it then execs never has them): a mode-000 file is then
# unreadable to root as it is to every other user. A trampoline process rather than a
# preexec_fn: that would fork this test process, which has lance loaded (not fork-safe).
_DROP_READ_OVERRIDE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for cap in (1, 2):
    if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
        sys.exit(f"prctl(PR_CAPBSET_DROP): {os.strerror(ctypes.get_errno())}")
os.execvp(sys.argv[1], sys.argv[1:])
"""


def _unprivileged() -> list[str]:
    """A command prefix under which permission bits bite, also when the suite runs as root
    (CI does); skips where neither holds."""
    if os.geteuid() != 0:
        return []
    prefix = [sys.executable, "-c", _DROP_READ_OVERRIDE]
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE here: {probe.stderr}")
    return prefix


def test_unreadable_file_is_reported_then_indexed_once_readable(tmp_path, test_models):
    """Three `vq` subprocesses: the test encoder spares each a model load."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nKettles boil water.\n")
    locked = root / "locked.md"
    locked.write_text("# Locked\n\nThe unreadable teapot note.\n")
    locked.chmod(0)
    cfg = write_config(tmp_path / "p.yaml", {"index_dir": str(tmp_path / "index"),
                                             "model": test_models,
                                             "vaults": {"v": {"path": str(root)}}})
    result = subprocess.run([*_unprivileged(), sys.executable, "-m", "vq", "--config", str(cfg),
                             "build", "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    problems = json.loads(result.stdout)["problems"]
    assert [(p["path"], "permission denied" in p["reason"]) for p in problems] == [
        ("locked.md", True)]
    status = json.loads(run_vq("--config", cfg, "status", "--json").stdout)
    assert [e["path"] for e in status["errors"]] == ["locked.md"]
    locked.chmod(0o644)
    assert run_vq("--config", cfg, "build").returncode == 0
    index = store.open_index(str(tmp_path / "index"))
    paths = index.chunks.search().select(["path"]).limit(None).to_arrow()["path"].to_pylist()
    assert sorted(set(paths)) == ["good.md", "locked.md"]
    status = json.loads(run_vq("--config", cfg, "status", "--json").stdout)
    assert status["errors"] == []
