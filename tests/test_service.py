"""The warm encode service: a real `vq serve` subprocess answering on a Unix socket."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from vq.core.paths import service_socket
from vq.query import warm
from vq.query.search import Query, search

pytestmark = [pytest.mark.model, pytest.mark.slow]


def wait_for(predicate, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)  # polling interval, not a wait for an event
    raise AssertionError("condition not met before the deadline")


def start_server(index_dir, config_file):
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config_file),
                             "serve"], stderr=subprocess.PIPE, text=True)
    wait_for(lambda: warm.encode(index_dir, "all-MiniLM-L6-v2", ["warm up"]))
    return proc


def stop_server(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


@pytest.fixture(scope="module")
def shared(tmp_path_factory, encoder):
    """One index and one server for the tests that leave the server running."""
    from tests.conftest import NOTES, write_config, write_tree
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    root = tmp_path_factory.mktemp("warm")
    write_tree(root / "notes", NOTES)
    cfg = write_config(root / "vq.yaml", {"index_dir": str(root / "index"),
                                          "vaults": {"notes": {"path": str(root / "notes")}}})
    settings = load_settings(str(cfg))
    locked_build(settings, encoder=encoder)
    proc = start_server(settings.index_dir, cfg)
    yield settings, cfg, proc
    stop_server(proc)


@pytest.fixture
def served(built, config_file):
    """A server of its own, for the tests that stop or kill it."""
    proc = start_server(built.index_dir, config_file)
    yield proc
    stop_server(proc)


def test_search_via_service_equals_in_process(built, served):
    path = service_socket(built.index_dir)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    via = search(built, Query("how do I undo a broken deployment", limit=5))
    assert via.encoder == f"service pid {served.pid}"
    served.send_signal(signal.SIGTERM)
    assert served.wait(timeout=60) == 0
    assert not path.exists()  # removed on a clean stop
    local = search(built, Query("how do I undo a broken deployment", limit=5))
    assert local.encoder == "in-process"
    assert [h.id for h in via.hits] == [h.id for h in local.hits]
    assert [h.score for h in via.hits] == pytest.approx([h.score for h in local.hits])


def test_killed_service_leaves_a_stale_socket_that_search_survives(built, served):
    path = service_socket(built.index_dir)
    served.send_signal(signal.SIGKILL)
    served.wait(timeout=60)
    assert path.exists()  # nobody cleaned up after a SIGKILL
    res = search(built, Query("canary rollout", limit=3))
    assert res.encoder == "in-process" and res.hits
    assert not path.exists()  # the client removed the stale socket


def test_concurrent_clients_disconnects_and_oversized_requests(shared):
    built, _, served = shared
    results: list = []

    def client(i: int) -> None:
        results.append(warm.encode(built.index_dir, "all-MiniLM-L6-v2", [f"query {i}"]))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 8 and all(r is not None and r[0].shape == (1, 384) for r in results)
    path = str(service_socket(built.index_dir))
    with socket.socket(socket.AF_UNIX) as sock:  # leaves mid-request
        sock.connect(path)
        sock.sendall(b'{"op": "enc')
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(b'{"op": "encode", "texts": ["' + b"x" * (9 * 1024 * 1024) + b'"]}\n')
        reply = json.loads(sock.makefile("rb").readline())
    assert reply == {"ok": False, "error": "request too large"}
    assert warm.info(built.index_dir)["pid"] == served.pid  # still serving


def test_warm_hybrid_search_from_a_cold_shell_imports_no_torch(shared):
    _, config_file, served = shared
    probe = ("import runpy, sys; sys.argv = ['vq'] + sys.argv[1:]\n"
             "try:\n    runpy.run_module('vq', run_name='__main__')\n"
             "except SystemExit: pass\n"
             "print('TORCH', 'torch' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe, "--config", str(config_file), "search",
                          "undo a broken deployment", "--json", "--explain"],
                         capture_output=True, text=True, timeout=120)
    assert "TORCH False" in out.stderr, out.stderr[-800:]
    explain = json.loads(out.stdout)["explain"]
    assert explain["method"] == "hybrid" and explain["encoder"] == f"service pid {served.pid}"


def test_service_loads_the_model_a_request_names(shared, tmp_path, cli):
    built, config_file, served = shared
    from sentence_transformers import SentenceTransformer

    from vq.core.encoder import model_location

    other = tmp_path / "other-model"
    SentenceTransformer(model_location("all-MiniLM-L6-v2"), device="cpu").save(str(other))
    reply = warm.encode(built.index_dir, str(other), ["hello"])
    assert reply is not None and reply[0].shape == (1, 384)
    assert warm.info(built.index_dir)["model"] == str(other)
    status = json.loads(cli("--config", config_file, "status", "--json").stdout)
    assert status["service"]["pid"] == served.pid
