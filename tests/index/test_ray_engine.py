"""`engine: ray` on a real local Ray cluster: the same index as a local build.

One ``ray.init(num_cpus=2)`` serves the whole module (a start costs seconds and
memory on a 2-core machine). Each Ray build is compared with a local build of
the same tree made by the same code, never with fixed values.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sys

import numpy as np
import pytest
import yaml

from tests.reliability import harness
from tests.reliability.test_object_store import s3_endpoint, s3_uri  # noqa: F401 - fixtures
from vq.core import store
from vq.core.errors import VqError
from vq.core.settings import load_settings
from vq.indexer.build import Builder
from vq.indexer.progress import NullProgress
from vq.jobs.runner import locked_build

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.ray]


@pytest.fixture(scope="module")
def cluster():
    """A real Ray on loopback for this module; builds in this process join it."""
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
             log_to_driver=False, logging_level="warning")
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def config(tmp_path, name, vault, index, **extra):
    data = {"index_dir": str(index), "device": "cpu", "write_batch_files": 5,
            "ray": {"batch_size": 2}, "maintenance": {"cleanup_grace_minutes": 0},
            "vaults": {"v": {"path": str(vault)}}, **extra}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def tables(location):
    """Every column of both tables (vectors apart), sorted; ``indexed_at`` is a clock."""
    index = store.open_index(location)
    chunks = index.chunks.to_arrow().sort_by("id")
    files = index.files.to_arrow().drop(["indexed_at"])
    files = files.sort_by([("vault", "ascending"), ("path", "ascending")])
    vectors = np.asarray(chunks["vector"].to_pylist() + chunks["section_vector"].to_pylist(),
                         dtype=np.float32)  # each piece's, then each piece's section's
    return (chunks.drop(["vector", "section_vector"]).to_pylist(), files.to_pylist(), vectors,
            index.meta)


def assert_same_index(ray_index, local_index):
    r_chunks, r_files, r_vec, r_meta = tables(ray_index)
    l_chunks, l_files, l_vec, l_meta = tables(local_index)
    assert r_meta == l_meta
    assert r_chunks == l_chunks and len(r_chunks) > 0  # ids, texts, line ranges, hashes
    assert r_files == l_files
    assert np.allclose(r_vec, l_vec, atol=2e-3)  # float16 storage rounds at ~1e-3


@pytest.fixture(scope="module")
def reference(tmp_path_factory, encoder):
    """The generated vault and its local build, made once for the module (a local build
    of it is seconds of the model): the tests that compare a Ray build of the vault with
    its local build copy this one."""
    root = tmp_path_factory.mktemp("reference")
    harness.write_vault(root / "vault", 7, files=24)
    cfg = config(root, "local", root / "vault", root / "local-index")
    with pytest.MonkeyPatch.context() as patch:
        one_commit_per_batch(patch)
        assert locked_build(load_settings(str(cfg)), encoder=encoder).outcome == "ok"
    return root


def one_commit_per_batch(monkeypatch):
    """A local build that commits text once per write batch and its vectors in one batch,
    so its table versions compare with a Ray build's."""
    from vq.indexer import embed, engine

    monkeypatch.setattr(engine, "TEXT_SECONDS", float("inf"))
    for name in ("FIRST_BATCH", "MIN_BATCH", "MAX_BATCH"):
        monkeypatch.setattr(embed, name, 10**9)


@pytest.fixture
def pair(tmp_path, cluster, reference):
    """A copy of the generated vault (its files keep their mtimes, so the reference's
    manifest holds for it) and two configs on separate indexes; neither names an engine."""
    vault = tmp_path / "vault"
    shutil.copytree(reference / "vault", vault)
    return (vault, config(tmp_path, "ray", vault, tmp_path / "ray-index"),
            config(tmp_path, "local", vault, tmp_path / "local-index"))


def copy_local_build(reference, local_cfg):
    """The reference's local build of the vault, as ``local_cfg``'s index."""
    shutil.copytree(reference / "local-index", index_of(local_cfg))


def on_ray(path):
    return load_settings(str(path), {"engine": "ray"})


def index_of(path):
    return load_settings(str(path)).index_dir


def test_ray_build_equals_local_build_then_one_edit_encodes_one_chunk(pair, reference, cli,
                                                                    build, monkeypatch):
    one_commit_per_batch(monkeypatch)  # the reference's local build was made so too
    vault, ray_cfg, local_cfg = pair
    out = cli("--config", ray_cfg, "build", "--engine", "ray", "--json")
    assert out.exit_code == 0, out.output
    first = json.loads(out.stdout)
    assert first["device"].startswith("ray: 1 cpu actor") and first["files_new"] == 24
    copy_local_build(reference, local_cfg)
    assert_same_index(index_of(ray_cfg), index_of(local_cfg))
    versions = [store.open_index(index_of(c)).chunks.version for c in (ray_cfg, local_cfg)]
    # one chunk commit per batch, not per task (3 tasks a batch would add 10 versions); the
    # local build adds one vector commit, and the two layouts compact to within one version
    assert abs(versions[0] - versions[1]) <= 1, versions

    note = vault / "d3" / "note3.md"
    text = note.read_text()
    note.write_text(text.rstrip()[:-1] + " edited.\n", encoding="utf-8")
    out = cli("--config", ray_cfg, "build", "--engine", "ray", "--json")
    again = json.loads(out.stdout)
    assert (again["files_changed"], again["chunks_encoded"], again["files_unchanged"]) == (1, 1, 23)
    assert build(load_settings(str(local_cfg))).chunks_encoded == 1
    assert_same_index(index_of(ray_cfg), index_of(local_cfg))


def actor_pid(actor) -> int:
    """Asked of Ray's actor table, not of the actor: a call to the actor would wait
    behind its queued tasks, and the kill would land only once it is idle."""
    from ray._private import state

    return int(state.actors(actor._actor_id.hex())["Pid"])


class KillWorkerAfterFirstBatch(NullProgress):
    """A progress display that SIGKILLs the build's actor once the first batch is committed,
    while the next batches are running or queued on it."""

    def __init__(self) -> None:
        self.builder: Builder | None = None
        self.killed = False

    def update(self, view):
        if view.files_done and not self.killed and self.builder is not None:
            actor = self.builder.engine.actors[0]
            os.kill(actor_pid(actor), signal.SIGKILL)
            self.killed = True


def killed_worker_build(settings):
    sink = KillWorkerAfterFirstBatch()
    builder = Builder(settings, progress=sink)
    sink.builder = builder
    try:
        return builder.run()
    finally:
        assert sink.killed


def test_a_killed_worker_is_retried_or_repaired(pair, reference, build, monkeypatch):
    vault, ray_cfg, local_cfg = pair
    copy_local_build(reference, local_cfg)
    settings = on_ray(ray_cfg)
    summary = killed_worker_build(settings)  # restarted actor, retried tasks
    assert summary.outcome == "ok" and summary.files_new == 24
    assert_same_index(settings.index_dir, index_of(local_cfg))

    from vq.indexer import engine_ray

    monkeypatch.setattr(engine_ray, "MAX_RETRIES", 0)  # now the build itself fails
    harness.mutate_vault(vault, 7)
    with pytest.raises(ray.exceptions.RayError):  # batches past the kill meet a dead actor
        killed_worker_build(dataclasses.replace(settings, write_batch_files=2))
    assert build(load_settings(str(ray_cfg))).outcome == "ok"  # a local build repairs it
    assert build(load_settings(str(local_cfg))).outcome == "ok"
    assert_same_index(settings.index_dir, index_of(local_cfg))


def test_a_killed_driver_leaves_an_index_the_next_build_repairs(pair, reference, cluster,
                                                                tmp_path):
    vault, _, local_cfg = pair
    index = tmp_path / "killed-index"
    cfg = config(tmp_path, "driver", vault, index, engine="ray", ray={
        "address": cluster, "batch_size": 2})
    watch = harness.Watch(cfg, index)  # a real `vq build` joining this module's cluster
    assert watch.until(lambda: len(watch.changes) >= 4), watch.proc.communicate()[1][-2000:]
    watch.kill()  # SIGKILL, reaped, its stderr pipe closed
    settings = load_settings(str(cfg))
    assert store.exists(settings.index_dir)
    again = locked_build(settings)  # Ray again: the killed driver's lock is gone
    assert again.outcome == "ok"
    copy_local_build(reference, local_cfg)
    assert_same_index(str(index), index_of(local_cfg))


def test_ray_build_on_object_storage_equals_local(tmp_path, cluster, s3_uri, build):  # noqa: F811
    vault = tmp_path / "vault"
    harness.write_vault(vault, 11, files=12)
    s3_cfg = config(tmp_path, "s3", vault, s3_uri, engine="ray")
    summary = locked_build(load_settings(str(s3_cfg)))
    assert summary.outcome == "ok" and summary.files_new == 12
    local_cfg = config(tmp_path, "local", vault, tmp_path / "local-index")
    assert build(load_settings(str(local_cfg))).outcome == "ok"
    assert_same_index(s3_uri, index_of(local_cfg))


def test_without_ray_the_engine_says_how_to_install_it(tmp_path, vault, monkeypatch, cli):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    cfg = config(tmp_path, "noray", vault, tmp_path / "index")
    with pytest.raises(VqError) as err:
        locked_build(load_settings(str(cfg), {"engine": "ray"}))
    assert str(err.value).endswith(": pip install 'vq[ray]'") and "\n" not in str(err.value)
    out = cli("--config", cfg, "build", "--engine", "ray")
    assert out.exit_code == 2 and out.stderr.splitlines() == [
        "error: engine 'ray' needs ray, which is not installed: pip install 'vq[ray]'"]
