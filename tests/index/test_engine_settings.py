"""`engine` and `ray.*` settings, and how the Ray engine sizes its actors (no Ray here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, write_config
from vq.core.errors import AcceleratorRequired, ConfigError
from vq.core.settings import RaySettings, load_settings
from vq.indexer.engine_ray import actor_plan


def test_example_config_names_the_local_engine_and_ray_defaults():
    s = load_settings(str(REPO / "config.example.yaml"))
    assert s.engine == "local" and s.ray == RaySettings()


def test_engine_and_ray_keys_from_file_env_and_flag(tmp_path, monkeypatch):
    cfg = write_config(tmp_path / "c.yaml", {"engine": "ray", "ray": {
        "address": "ray://head:10001", "num_gpus_per_worker": 0.5, "batch_size": 20}})
    s = load_settings(str(cfg))
    assert (s.engine, s.ray) == ("ray", RaySettings("ray://head:10001", 0.5, 20))
    monkeypatch.setenv("VQ_RAY__ADDRESS", "10.1.2.3:6379")
    monkeypatch.setenv("VQ_RAY__NUM_GPUS_PER_WORKER", "2")
    s = load_settings(str(cfg))
    assert s.ray.address == "10.1.2.3:6379" and s.ray.num_gpus_per_worker == 2.0
    assert s.sources["ray.address"] == "env VQ_RAY__ADDRESS"
    s = load_settings(str(cfg), {"engine": "local"})
    assert s.engine == "local" and s.sources["engine"] == "flag --engine"


@pytest.mark.parametrize("data, key, words", [
    ({"engine": "spark"}, "engine", "not one of local, ray"),
    ({"ray": {"num_gpus_per_worker": 0}}, "ray.num_gpus_per_worker", "more than 0"),
    ({"ray": {"batch_size": 0}}, "ray.batch_size", "at least 1"),
    ({"ray": {"address": " "}}, "ray.address", "empty"),
    ({"ray": {"workers": 4}}, "ray.workers", "unknown key"),
    ({"ray": "auto"}, "ray", "expected a mapping"),
])
def test_bad_engine_settings_name_the_key(tmp_path, data, key, words):
    cfg = write_config(tmp_path / "c.yaml", data)
    with pytest.raises(ConfigError) as err:
        load_settings(str(cfg))
    assert err.value.key == key and words in str(err.value)


def settings_with(tmp_path, **data):
    return load_settings(str(write_config(tmp_path / "c.yaml", data)))


def test_one_actor_per_gpu_share_else_cpu_actors(tmp_path):
    auto = settings_with(tmp_path)
    assert actor_plan(auto, {"CPU": 2}) == ("cpu", 1, {"num_cpus": 2})
    assert actor_plan(auto, {"CPU": 16}) == ("cpu", 4, {"num_cpus": 4})
    assert actor_plan(auto, {"CPU": 16, "GPU": 4}) == ("cuda", 4, {"num_gpus": 1.0,
                                                                   "num_cpus": 1})
    half = settings_with(tmp_path, ray={"num_gpus_per_worker": 0.5})
    assert actor_plan(half, {"CPU": 16, "GPU": 2})[:2] == ("cuda", 4)
    cpu = settings_with(tmp_path, device="cpu")
    assert actor_plan(cpu, {"CPU": 8, "GPU": 2}) == ("cpu", 2, {"num_cpus": 4})
    strict = settings_with(tmp_path, device="cuda")
    with pytest.raises(AcceleratorRequired):
        actor_plan(strict, {"CPU": 8})


def test_the_engine_modules_import_no_ray_or_lance():
    code = ("import sys, vq.indexer.build, vq.indexer.engine_ray; "
            "print(sorted(m for m in ('ray', 'lance') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"
