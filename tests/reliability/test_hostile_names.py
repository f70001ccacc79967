"""Issue 17, item 1: a file name that is not UTF-8 is one file's problem, not the build's.

``caf\\xe9.md`` (Latin-1 bytes, common in copied archives) used to fail every
build with ``UnicodeEncodeError: surrogates not allowed`` (pyarrow cannot store
the surrogate ``os.fsdecode`` gives for the byte): a new index stayed empty.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import write_config
from vq.core import store
from vq.core.settings import load_settings

pytestmark = pytest.mark.model


@pytest.fixture
def latin1_vault(tmp_path):
    root = tmp_path / "archive"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nThe quokka survives.\n")
    os.mkdir(os.path.join(os.fsencode(root), b"d\xe9j\xe0"))
    with open(os.path.join(os.fsencode(root), b"caf\xe9.md"), "wb") as fh:
        fh.write(b"# Cafe\n\nau lait\n")
    with open(os.path.join(os.fsencode(root), b"d\xe9j\xe0", b"vu.md"), "wb") as fh:
        fh.write(b"# Vu\n\nagain\n")
    return root


def test_non_utf8_names_are_reported_escaped_and_the_rest_indexed(tmp_path, latin1_vault,
                                                                   build, cli):
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                             "vaults": {"a": {"path": str(latin1_vault)}}})
    summary = build(load_settings(str(cfg)))
    assert summary.outcome == "ok"
    reasons = {p["path"]: p["reason"] for p in summary.problems}
    assert set(reasons) == {"caf\\xe9.md", "d\\xe9j\\xe0/vu.md"}
    assert all("not valid UTF-8" in r and "rename" in r for r in reasons.values())
    index = store.open_index(str(tmp_path / "index"))
    paths = index.chunks.search().select(["path"]).limit(None).to_arrow()["path"].to_pylist()
    assert paths == ["good.md"]
    status = json.loads(cli("--config", cfg, "status", "--json").stdout)
    assert {e["path"] for e in status["errors"]} == set(reasons)
    human = cli("--config", cfg, "status").stdout
    assert "a:caf\\xe9.md: file name is not valid UTF-8" in human
    version = index.files.version
    again = build(load_settings(str(cfg)))
    assert again.outcome == "ok" and {p["path"] for p in again.problems} == set(reasons)
    assert store.open_index(str(tmp_path / "index")).files.version == version  # no rewrite
    os.rename(os.path.join(os.fsencode(latin1_vault), b"caf\xe9.md"), latin1_vault / "café.md")
    fixed = build(load_settings(str(cfg)))
    assert {p["path"] for p in fixed.problems} == {"d\\xe9j\\xe0/vu.md"}
    index = store.open_index(str(tmp_path / "index"))
    paths = set(index.files.search().select(["path"]).limit(None).to_arrow()["path"].to_pylist())
    assert paths == {"good.md", "café.md", "d\\xe9j\\xe0/vu.md"}
