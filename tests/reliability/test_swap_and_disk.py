"""Issue 37, item 8: crash and disk windows.

On main a kill between the two renames of the `--rebuild` swap left no index
(every search said "no index" until a full rebuild), a full disk left the ONNX
export's temporary files behind, and with a zero cleanup grace a search whose
data file a build had just removed reported a damaged index.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import one_note_index, run_vq
from vq.core.settings import load_settings
from vq.indexer import onnx_export
from vq.query import search as search_module
from vq.query.search import search
from vq.query.search_output import query_from

KILL_AT_SECOND_TABLE_RENAME = textwrap.dedent("""\
    import os, sys
    real, moved = os.rename, []
    def rename(src, dst, *a, **k):
        if str(src).endswith(".lance"):
            moved.append(src)
            if len(moved) == 2:
                os._exit(9)  # as kill -9 between the swap's two renames
        return real(src, dst, *a, **k)
    os.rename = rename
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build
    locked_build(load_settings(sys.argv[1]), rebuild=True)
    """)


@pytest.fixture
def cfg(tmp_path, test_models):
    return one_note_index(tmp_path, "the walrus note")


def test_a_rebuild_killed_between_its_renames_is_finished_by_the_next_reader(cfg, tmp_path):
    killed = subprocess.run([sys.executable, "-c", KILL_AT_SECOND_TABLE_RENAME, str(cfg)],
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == 9, killed.stderr
    assert not (tmp_path / "index" / "chunks.lance").exists()  # the window itself
    found = run_vq("--config", cfg, "search", "walrus", "--method", "lexical", "--json")
    assert found.returncode == 0, found.stderr
    assert [h["path"] for h in json.loads(found.stdout)] == ["a.md"]
    assert not (tmp_path / "index" / "rebuild.tmp").exists()
    assert run_vq("--config", cfg, "status", "--check").returncode == 0
    assert run_vq("--config", cfg, "build").returncode == 0


def test_a_failed_onnx_export_leaves_no_temporary_files(tmp_path, monkeypatch):
    out = onnx_export.folder(str(tmp_path))
    out.mkdir(parents=True)
    (out / "tokenizer.tmp-99").mkdir()  # a killed export's leftover
    (out / "tokenizer.tmp-99" / "vocab.txt").write_bytes(b"x" * 1000)

    def disk_full(folder, *args):
        (folder / "model.onnx.tmp-123").write_bytes(b"x" * 1000)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(onnx_export, "_export", disk_full)
    with pytest.raises(OSError):
        onnx_export.export(str(tmp_path), "m", object())
    assert sorted(p.name for p in out.iterdir()) == []


def test_a_data_file_removed_under_a_search_is_read_again_not_called_damage(cfg,
                                                                           monkeypatch):
    real, calls = search_module._search, []

    def cleaned_under_it(*args):
        calls.append(1)
        if len(calls) == 1:  # what LanceDB raises when cleanup removed the version's file
            raise RuntimeError("lance error: Not found: index/chunks.lance/data/0.lance")
        return real(*args)

    monkeypatch.setattr(search_module, "_search", cleaned_under_it)
    res = search(load_settings(str(cfg)), query_from({"text": "walrus", "method": "lexical",
                                                               "limit": 5}))
    assert [h.path for h in res.hits] == ["a.md"] and len(calls) == 2
