"""Issue 38, item 4: a no-op build and the sweep cost a walk.

The walk cache keeps each folder's classified listing while the folder's mtime
holds; a build whose walk finds exactly the last clean build's walk, with the
tables unmoved, plans from it without reading the manifest. These tests check
that the cache never changes what a walk finds, and that a change of any kind
(new file, edit, .gitignore, deleted data file) still reaches the build.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conftest import write_config, write_tree
from vq.core.errors import IndexCorrupt
from vq.core.settings import Vault, load_settings
from vq.core.walk import SizeCap, discover
from vq.core.walk_cache import WalkCache


def age(root: Path, seconds: float = 60) -> None:
    """Date every folder back, as a tree untouched for a minute is: the cache keeps no
    listing of a folder changed within the last few seconds."""
    past = time.time() - seconds
    for folder, _, _ in os.walk(root):
        os.utime(folder, (past, past))


def facts(found) -> tuple:
    return ([(e.vault, e.path, str(e.location), e.size, e.mtime_ns) for e in found.files],
            found.problems, dict(found.skipped))


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "tree"
    write_tree(root, {"a.md": "# A\n\nalpha\n", "sub/b.md": "# B\n\nbeta\n",
                      "sub/skip.log.min.js": "x", "sub/.hidden.md": "h",
                      "node_modules/x.md": "vendored", "ignored/c.md": "gone",
                      ".gitignore": "ignored/\n", "sub/deep/d.py": "def d():\n    pass\n"})
    os.symlink(root / "a.md", root / "sub" / "link.md")
    age(root)
    return root


def walk(root: Path, cache: WalkCache | None):
    return discover([Vault("v", root)], SizeCap(1_000_000, 1_000_000), cache=cache)


def test_a_cached_walk_finds_exactly_what_a_fresh_walk_finds(tree, tmp_path):
    cache_file = str(tmp_path / "walk-cache")
    fresh = walk(tree, None)
    first = WalkCache(cache_file)
    assert facts(walk(tree, first)) == facts(fresh)
    first.save()
    again = WalkCache(cache_file)
    found = walk(tree, again)
    assert facts(found) == facts(fresh) and found.same_as_cache
    assert again.vaults["v"].old, "the second walk read the saved listings"


def test_new_files_edits_and_gitignore_edits_reach_a_cached_walk(tree, tmp_path):
    cache_file = str(tmp_path / "walk-cache")
    cache = WalkCache(cache_file)
    walk(tree, cache)
    cache.save()
    (tree / "sub" / "b.md").write_text("# B\n\nbeta, longer now\n")  # folder mtime unchanged
    age(tree)
    edited = walk(tree, WalkCache(cache_file))
    assert not edited.same_as_cache
    assert {e.path: e.size for e in edited.files}["sub/b.md"] == len("# B\n\nbeta, longer now\n")
    (tree / ".gitignore").write_text("sub/deep/\n")  # re-include ignored/, drop sub/deep
    age(tree)
    regit = walk(tree, WalkCache(cache_file))
    assert facts(regit) == facts(walk(tree, None))
    assert "ignored/c.md" in {e.path for e in regit.files}
    assert "sub/deep/d.py" not in {e.path for e in regit.files}
    (tree / "sub" / "new.md").write_text("# New\n")  # the folder's mtime moves
    grown = walk(tree, WalkCache(cache_file))
    assert "sub/new.md" in {e.path for e in grown.files}


def test_a_folder_changed_moments_ago_is_listed_again_next_time(tree, tmp_path):
    cache_file = str(tmp_path / "walk-cache")
    (tree / "sub" / "fresh.md").write_text("# Fresh\n")  # sub's mtime is now
    cache = WalkCache(cache_file)
    walk(tree, cache)
    cache.save()
    assert "sub" not in cache.vaults["v"].new and "" in cache.vaults["v"].new
    assert not walk(tree, WalkCache(cache_file)).same_as_cache


@pytest.fixture
def hashed(tmp_path, test_models, vault):
    """Settings on the torch-free test encoder, over an aged copy of the notes vault."""
    age(vault)
    config = write_config(tmp_path / "vq-hash.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "vaults": {"notes": {"path": str(vault)}}})
    return load_settings(str(config))


def test_a_second_noop_build_plans_from_the_walk_cache(hashed, vault):
    from vq.jobs.runner import locked_build

    first = locked_build(hashed)
    assert first.files_new > 0 and first.plan == "walk"
    full = locked_build(hashed)  # finds nothing to do, the full way, and says so to the cache
    assert full.plan == "walk" and full.files_new == full.files_changed == 0
    known = locked_build(hashed)
    assert known.plan == "walk cache" and known.files_seen == full.files_seen
    assert known.files_unchanged == full.files_unchanged and known.skipped == full.skipped
    (vault / "deploy.md").write_text("# Deploying\n\nNow with a new paragraph.\n")
    edited = locked_build(hashed)
    assert edited.plan == "walk" and edited.files_changed == 1


def test_a_noop_from_the_walk_cache_still_finds_a_deleted_data_file(hashed):
    from vq.jobs.runner import locked_build

    for _ in range(2):
        locked_build(hashed)
    index_dir = Path(hashed.index_dir)
    for path in (index_dir / "chunks.lance" / "data").glob("*.lance"):
        path.unlink()
    with pytest.raises(IndexCorrupt):
        locked_build(hashed)
