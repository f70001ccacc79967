"""The resident service: a real `vq serve` subprocess answering whole searches on a socket."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading

import pytest

from tests.conftest import NOTES, private_runtime, wait_for, write_config, write_tree
from tests.processes import reap
from vq.core import runtime, store
from vq.core.runtime import service_socket
from vq.query.search import Query, models_for, search
from vq.query.service import client
from vq.query.sources import LanceSources

pytestmark = [pytest.mark.model, pytest.mark.slow]


def search_asking_service(settings, q):
    """A library search that asks the index's service to encode, as the CLI and MCP do."""
    sources = LanceSources(store.open_for(settings))
    return search(settings, q, sources, models_for(settings, sources.index, service=True))


MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module", autouse=True)
def runtime_dir():
    """A private socket folder for this module (short: a socket path has ~100 bytes)."""
    with private_runtime("vqt") as folder:
        yield folder


def start_server(index_dir, config_file, env=None):
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config_file),
                             "serve"], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "VQ_WATCH": "false", **(env or {})})
    wait_for(lambda: proc.poll() is not None or client.encode(MODEL, ["warm up"], index_dir))
    assert proc.poll() is None, proc.stderr.read()
    return proc


def stop_server(proc):
    reap(proc, signal.SIGTERM)


@pytest.fixture(scope="module")
def shared(tmp_path_factory, encoder):
    """One index (with its ONNX export) and one server for the tests that leave it running."""
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    root = tmp_path_factory.mktemp("warm")
    write_tree(root / "notes", NOTES)
    cfg = write_config(root / "vq.yaml", {"index_dir": str(root / "index"),
                                          "serve": {"onnx_export": True},
                                          "vaults": {"notes": {"path": str(root / "notes")}}})
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("VQ_")}
    try:
        settings = load_settings(str(cfg))
        assert locked_build(settings, encoder=encoder).query_onnx == "exported"
    finally:
        os.environ.update(saved)
    proc = start_server(settings.index_dir, cfg)
    yield settings, cfg, proc
    stop_server(proc)


@pytest.fixture
def empty_runtime():
    """A short socket folder where no service runs (a socket path has ~100 bytes)."""
    folder = tempfile.mkdtemp(prefix="vqe")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def own_runtime(monkeypatch):
    """A socket folder of this test's own: one service per user, and the module's shared
    service is this user's in the module's folder."""
    folder = tempfile.mkdtemp(prefix="vqp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def served(built, config_file, own_runtime):
    """A server of its own, for the tests that stop or kill it."""
    proc = start_server(built.index_dir, config_file)
    yield proc
    stop_server(proc)


def test_search_via_service_equals_in_process(built, served):
    path = service_socket()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    via = search_asking_service(built, Query("how do I undo a broken deployment", limit=5))
    assert via.encoder == f"service pid {served.pid}"
    served.send_signal(signal.SIGTERM)
    assert served.wait(timeout=60) == 0
    assert not path.exists()  # removed on a clean stop
    local = search_asking_service(built, Query("how do I undo a broken deployment", limit=5))
    assert local.encoder == "in-process"
    assert [h.id for h in via.hits] == [h.id for h in local.hits]
    assert [h.score for h in via.hits] == pytest.approx([h.score for h in local.hits])


CASES = [
    ["--json", "how do I undo a broken deployment"],
    ["--json", "storage engine", "-m", "dense", "-n", "3"],
    ["--json", "E4711 quota", "-m", "lexical"],
    ["--json", "release", "--tag", "ops", "--explain"],
    ["--json", "release", "--path", "adr/**", "--kind", "notes"],
    ["--files", "canary rollout"],
    ["canary rollout"],  # the readable list, as rich renders it off a TTY
    ["--json", "bread", "--since", "2999-01-01"],  # nothing: exit 1, the reason on stderr
    ["--json", "bread", "--since", "not-a-date"],  # domain error: exit 2, error and fix
]


def _cli(cli, cfg, args):
    """(exit code, stdout, stderr, encoder) of `vq search ...`, explain's timing removed."""
    res = cli("--config", cfg, "search", *args)
    out, encoder = res.stdout, None
    if "--explain" in args and "--json" in args:
        data = json.loads(out)
        data["explain"].pop("seconds")
        encoder = data["explain"].pop("encoder")
        out = json.dumps(data, sort_keys=True)
    return res.exit_code, out, res.stderr, encoder


def test_whole_searches_through_the_service_print_what_in_process_prints(
        shared, cli, monkeypatch, empty_runtime):
    settings, cfg, served = shared
    via = [_cli(cli, cfg, args) for args in CASES]
    monkeypatch.setenv("XDG_RUNTIME_DIR", empty_runtime)  # no service there
    local = [_cli(cli, cfg, args) for args in CASES]
    for args, (code, out, err, enc), (code2, out2, err2, enc2) in zip(CASES, via, local,
                                                                      strict=True):
        assert (code, err) == (code2, err2), args
        if "--json" in args and code == 0:  # equal JSON; a dense score may differ by 1e-6
            assert _floats_near(json.loads(out), json.loads(out2)), args
        else:
            assert out == out2, args
        if enc is not None:
            assert enc == f"service pid {served.pid}" and enc2 == "in-process"
    assert [c[0] for c in via] == [0, 0, 0, 0, 0, 0, 0, 1, 2]
    assert json.loads(via[0][1]) and "no results" in via[7][2] and "error:" in via[8][2]


def _floats_near(a, b) -> bool:
    """Equal structures; floats within 2e-6 (the resident matrix vs LanceDB's scan, after
    both round to 6 decimals)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _floats_near(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _floats_near(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 2e-6
    return a == b


def test_killed_service_leaves_a_stale_socket_that_search_survives(built, served):
    path = service_socket()
    served.send_signal(signal.SIGKILL)
    served.wait(timeout=60)
    assert path.exists()  # nobody cleaned up after a SIGKILL
    res = search_asking_service(built, Query("canary rollout", limit=3))
    assert res.encoder == "in-process" and res.hits
    assert not path.exists()  # the client removed the stale socket


def test_32_concurrent_clients_disconnects_and_oversized_requests(shared):
    built, _, served = shared
    results: list = []
    start = threading.Barrier(32)
    query = {"text": "canary rollout", "method": "hybrid", "limit": 3, "filters": {}}

    def ask(i: int) -> None:
        start.wait()
        if i % 2:
            results.append(client.encode(MODEL, [f"query {i}"], built.index_dir))
        else:
            results.append(client.search(built, {}, query, {"json": True}))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 32 and all(r is not None for r in results)
    assert all(r[0].shape == (1, 384) for r in results if isinstance(r, tuple))
    assert all(r["exit"] == 0 for r in results if isinstance(r, dict))
    path = str(service_socket())
    with socket.socket(socket.AF_UNIX) as sock:  # leaves mid-request
        sock.connect(path)
        sock.sendall(b'{"op": "enc')
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(b'{"op": "encode", "texts": ["' + b"x" * (9 * 1024 * 1024) + b'"]}\n')
        reply = json.loads(sock.makefile("rb").readline())
    assert reply == {"ok": False, "error": "request too large"}
    assert client.info()["pid"] == served.pid  # still serving


def test_a_second_service_for_the_same_user_is_refused(shared):
    _, cfg, served = shared
    out = subprocess.run([sys.executable, "-m", "vq", "--config", str(cfg), "serve"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert f"a vq service (pid {served.pid}) already runs for this user" in out.stderr


PROBE = ("import runpy, sys; sys.argv = ['vq'] + sys.argv[1:]\n"
         "try:\n    runpy.run_module('vq', run_name='__main__')\n"
         "except SystemExit: pass\n"
         "heavy = [m for m in ('torch', 'lancedb', 'pyarrow', 'numpy', 'sentence_transformers',"
         " 'vq.indexer', 'vq.query.search') if m in sys.modules]\n"
         "print('HEAVY', heavy, file=sys.stderr)")


def test_hybrid_search_from_a_cold_shell_through_the_service_imports_nothing_heavy(shared):
    _, config_file, served = shared
    out = subprocess.run([sys.executable, "-c", PROBE, "--config", str(config_file), "search",
                          "undo a broken deployment", "--json", "--explain"],
                         capture_output=True, text=True, timeout=120)
    assert "HEAVY []" in out.stderr, out.stderr[-800:]
    explain = json.loads(out.stdout)["explain"]
    assert explain["method"] == "hybrid" and explain["encoder"] == f"service pid {served.pid}"


def test_without_a_service_hybrid_search_encodes_with_onnx_and_no_torch(shared, empty_runtime):
    _, config_file, _ = shared
    env = {**os.environ, "XDG_RUNTIME_DIR": empty_runtime}  # no service there
    out = subprocess.run([sys.executable, "-c", PROBE, "--config", str(config_file), "search",
                          "undo a broken deployment", "--json", "--explain"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert "torch" not in out.stderr.split("HEAVY", 1)[1], out.stderr[-800:]
    explain = json.loads(out.stdout)["explain"]
    assert explain["method"] == "hybrid" and explain["encoder"] == "in-process"


def test_service_loads_the_model_a_request_names(shared, tmp_path, cli):
    built, config_file, served = shared
    from sentence_transformers import SentenceTransformer

    from vq.core.encoder import model_location

    other = tmp_path / "other-model"
    SentenceTransformer(model_location(MODEL), device="cpu").save(str(other))
    reply = client.encode(str(other), ["hello"], deadline=300)  # loads torch
    assert reply is not None and reply[0].shape == (1, 384)
    assert str(other) in [m["model"] for m in client.info()["models"]]
    status = json.loads(cli("--config", config_file, "status", "--json").stdout)
    assert status["service"]["pid"] == served.pid


def _services(config_file) -> list[int]:
    """Pids of `vq serve` processes for this config (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(config_file).encode() in argv:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="counts processes in /proc")
def test_four_racing_searches_autostart_exactly_one_service(built, config_file, own_runtime):
    env = {**os.environ, "VQ_SEARCH__AUTOSTART": "true"}
    procs = [subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config_file),
                               "search", "-m", "lexical", "canary rollout"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    try:
        for p in procs:
            p.communicate(timeout=300)  # and close its pipes
        assert [p.returncode for p in procs] == [0, 0, 0, 0]
        info = wait_for(lambda: client.info())
        assert _services(config_file) == [info["pid"]]
        assert info["idle_minutes"] == 30
        out = subprocess.run([sys.executable, "-m", "vq", "--config", str(config_file),
                              "search", "--explain", "canary rollout"],
                             env=env, capture_output=True, text=True, timeout=120)
        assert f"encoder=service pid {info['pid']}" in out.stdout
        stop = subprocess.run([sys.executable, "-m", "vq", "--config", str(config_file),
                               "serve", "--stop"], env=env, capture_output=True, text=True,
                              timeout=120)
        assert f"stopped the vq service (pid {info['pid']})" in stop.stderr
        assert client.info() is None
        wait_for(lambda: not _services(config_file), timeout=60)  # exiting after the lock
    finally:
        for pid in _services(config_file):
            os.kill(pid, signal.SIGTERM)


def test_no_autostart_under_ci_or_when_off(built, config_file, own_runtime):
    for extra in ({"CI": "true", "VQ_SEARCH__AUTOSTART": "true"},
                  {"VQ_SEARCH__AUTOSTART": "false"}):
        out = subprocess.run([sys.executable, "-m", "vq", "--config", str(config_file),
                              "search", "-m", "lexical", "canary"],
                             env={**os.environ, **extra}, capture_output=True, timeout=120)
        assert out.returncode == 0
    assert not runtime.is_running() and not _services(config_file)


def test_an_idle_service_exits_by_itself(built, tmp_path, own_runtime):
    cfg = write_config(tmp_path / "idle.yaml", {
        "index_dir": built.index_dir, "serve": {"idle_minutes": 0.01},
        "vaults": {"notes": {"path": str(tmp_path / "notes")}}})
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(cfg), "serve"],
                            stderr=subprocess.PIPE, text=True)
    try:
        code = proc.wait(timeout=300)  # 0.6 s without a request, then a clean exit
        err = proc.stderr.read()
    finally:
        stop_server(proc)
    assert code == 0, err
    assert "stopped; socket removed" in err
    assert not service_socket().exists()
    assert not runtime.is_running()


def test_the_service_loads_a_build_s_new_version_before_any_query_asks(built, build, vault,
                                                                      own_runtime):
    """A build commits; within a few seconds the service holds the new snapshot itself,
    so the first search after a cron build does not pay for loading it."""
    from vq.core import store
    from vq.query.service import server as service

    svc = service.start(built)
    try:
        svc.preloading.join(120)
        slot = svc.ops.slots[built.index_dir]
        first = slot._snapshot
        assert first is not None and first.version == store.open_for(built).chunks.version
        (vault / "fresh-note.md").write_text("# Fresh\n\nA quokka crossed the build.\n",
                                             encoding="utf-8")
        assert build(built).outcome == "ok"
        version = store.open_for(built).chunks.version
        assert version != first.version
        snap = wait_for(lambda: slot._snapshot if slot._snapshot.version == version
                        else None, timeout=60)
        assert "fresh-note.md" in snap.rows["path"].to_pylist()
        assert "fresh-note.md" not in first.rows["path"].to_pylist()
    finally:
        service.stop(svc)
