"""Multi-device encode: the pool's vectors equal the in-process ones, in input order.

The pool is sentence-transformers' own multi-process pool; on this CPU-only
machine two CPU worker processes stand in for two GPUs.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.conftest import write_config
from vq.core.encoder import Device, Encoder, pool_targets
from vq.core.errors import AcceleratorRequired, ConfigError
from vq.core.settings import load_settings

CPU = Device("cpu", "configured")


def test_cpu_processes_become_cpu_workers():
    assert pool_targets(CPU) == ()
    assert pool_targets(CPU, processes=1) == ()
    assert pool_targets(CPU, processes=3) == ("cpu", "cpu", "cpu")
    assert pool_targets(CPU, devices=["cpu", "cpu"], processes=5) == ("cpu", "cpu")


def test_several_cuda_devices_are_used_by_default(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    cuda = Device("cuda", "auto")
    assert pool_targets(cuda) == ("cuda:0", "cuda:1")
    assert pool_targets(cuda, processes=4) == ("cuda:0", "cuda:1")  # one process per GPU
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert pool_targets(cuda) == ()


def test_a_listed_gpu_that_is_absent_is_an_error(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(AcceleratorRequired) as err:
        pool_targets(CPU, devices=["cuda:0", "cuda:1"])
    assert "`devices` lists cuda:0" in err.value.message


def test_settings_devices_and_processes(tmp_path, monkeypatch):
    cfg = write_config(tmp_path / "c.yaml", {"devices": ["cuda:0", "cuda:1"],
                                             "encode_processes": 2})
    s = load_settings(str(cfg))
    assert (s.devices, s.encode_processes) == (("cuda:0", "cuda:1"), 2)
    monkeypatch.setenv("VQ_ENCODE_PROCESSES", "4")
    monkeypatch.setenv("VQ_DEVICES", "[cpu, cpu]")
    s = load_settings(str(cfg))
    assert (s.devices, s.encode_processes) == (("cpu", "cpu"), 4)
    assert s.sources["devices"] == "env VQ_DEVICES"


@pytest.mark.parametrize("data, key, words", [
    ({"devices": ["cuda:0"]}, "devices", "two or more"),
    ({"devices": ["gpu0", "gpu1"]}, "devices", "not a torch device"),
    ({"devices": "cuda:0"}, "devices", "expected list"),
    ({"encode_processes": 0}, "encode_processes", "at least 1"),
])
def test_bad_pool_settings_name_the_key(tmp_path, data, key, words):
    cfg = write_config(tmp_path / "c.yaml", data)
    with pytest.raises(ConfigError) as err:
        load_settings(str(cfg))
    assert err.value.key == key and words in str(err.value)


TEXTS = [f"Note {i} > Section\n\n" + " ".join(["release rollback canary lock"] * (1 + i % 9))
         for i in range(40)]


@pytest.fixture(scope="module")
def pooled():
    """One 2-process CPU encoder for the module: spawning workers costs seconds (each
    imports torch and loads the model), so the test that closes the pool runs last."""
    enc = Encoder("all-MiniLM-L6-v2", "cpu", batch_size=8, processes=2)
    yield enc
    enc.close()


@pytest.mark.model
@pytest.mark.slow
def test_two_processes_give_the_in_process_vectors(pooled, encoder):
    ticks: list[int] = []
    got = pooled.encode(TEXTS, progress=ticks.append)
    assert pooled._pool is not None and len(pooled._pool["processes"]) == 2
    want = encoder.encode(TEXTS)  # the session model, in-process
    assert encoder.pool_devices == ()
    assert got.shape == want.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert sum(ticks) == len(TEXTS)


@pytest.mark.model
@pytest.mark.slow
def test_a_build_with_the_pool_writes_the_same_vectors(settings, pooled, encoder,
                                                     monkeypatch):
    from vq.core import store
    from vq.jobs.runner import locked_build

    # the test vault's few chunks still make several batches (restored for the next test)
    monkeypatch.setattr(pooled, "batch_size", 2)
    summary = locked_build(settings, encoder=pooled)
    assert summary.outcome == "ok" and summary.chunks_encoded > pooled.batch_size
    assert pooled._pool is not None
    rows = (store.open_index(settings.index_dir).chunks.search().select(["text", "vector"])
            .limit(None).to_arrow().to_pylist())
    stored = np.array([r["vector"] for r in rows], dtype=np.float32)
    want = encoder.encode([r["text"] for r in rows])
    np.testing.assert_allclose(stored, want, atol=2e-3)  # stored as float16


@pytest.mark.model
@pytest.mark.slow
def test_one_batch_stays_in_process_and_close_stops_workers(pooled):
    pooled.encode(TEXTS[:3])  # warm pool or not, a small encode is answered in-process
    pooled.encode(TEXTS)
    workers = list(pooled._pool["processes"])
    assert all(p.is_alive() for p in workers)
    pids = [p.pid for p in workers]
    pooled.close()
    assert pooled._pool is None and not any(_running(pid) for pid in pids)
    assert pooled.encode(TEXTS[:2]).shape == (2, 384)  # still usable without the pool


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
