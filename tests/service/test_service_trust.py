"""Who may use the service: a socket folder another user could control is refused.

Fast tests (no model): the folder checks, what `vq serve` and `vq search` say
about an unsafe folder, the new settings' validation, and a service that
refuses a peer of another uid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile

import pytest

from tests.conftest import write_config
from vq.core import runtime
from vq.core.errors import ConfigError, ServiceDirUnsafe


@pytest.fixture
def xdg(monkeypatch):
    """A short private XDG_RUNTIME_DIR (a socket path must fit in ~100 bytes), removed
    afterwards."""
    base = tempfile.mkdtemp(prefix="vqs")
    monkeypatch.setenv("XDG_RUNTIME_DIR", base)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_the_socket_folder_is_created_private(xdg):
    folder = runtime.runtime_dir()
    assert folder == runtime.service_socket().parent
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert os.stat(folder).st_uid == os.getuid()


def test_without_xdg_runtime_dir_a_per_user_folder_in_tmp(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert runtime.runtime_dir() == tmp_path / f"vq-{os.getuid()}"


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701, 0o777])
def test_a_folder_with_a_wider_mode_is_refused(xdg, mode):
    folder = os.path.join(xdg, "vq")
    os.mkdir(folder)
    os.chmod(folder, mode)
    with pytest.raises(ServiceDirUnsafe, match=f"its mode is {mode:04o}, not 0700") as exc:
        runtime.service_socket()
    assert "chmod 700" in exc.value.fix


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a folder to another user")
def test_a_folder_owned_by_another_user_is_refused(xdg):
    folder = os.path.join(xdg, "vq")
    os.mkdir(folder, 0o700)
    os.chown(folder, 65534, 65534)
    with pytest.raises(ServiceDirUnsafe, match="owned by uid 65534, not by you"):
        runtime.runtime_dir()


def test_a_symlinked_folder_is_refused(xdg, tmp_path):
    os.symlink(tmp_path, os.path.join(xdg, "vq"))
    with pytest.raises(ServiceDirUnsafe, match="not a plain folder"):
        runtime.runtime_dir()


def test_serve_refuses_and_search_falls_back_with_a_notice(xdg, cli, config_file):
    folder = os.path.join(xdg, "vq")
    os.mkdir(folder)
    os.chmod(folder, 0o777)
    res = cli("--config", config_file, "serve")
    assert res.exit_code == 2
    assert f"refusing the vq service folder {folder}: its mode is 0777" in res.stderr
    # no index yet: the search itself fails, after saying why it did not use the service
    res = cli("--config", config_file, "search", "-m", "lexical", "anything")
    assert "notice: not using the vq service: refusing the vq service folder" in res.stderr
    assert res.exit_code == 2 and "no index at" in res.stderr


def test_a_peer_of_another_uid_is_not_served(xdg, monkeypatch):
    """The server checks SO_PEERCRED; pretend every peer is someone else."""
    import socket

    from vq.query.service import server as service

    class Ops:
        def info(self):
            return {}

        def answer(self, msg):
            return {"ok": True}

    server = service.Service(Ops())
    try:
        monkeypatch.setattr(runtime, "peer_uid", lambda sock: os.getuid() + 1)
        import threading

        threading.Thread(target=server.serve_forever, daemon=True).start()
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(30)
            sock.connect(str(server.path))
            try:  # the server may close before the request is even sent: also a refusal
                sock.sendall(b'{"op": "info"}\n')
                answer = sock.recv(100)
            except (ConnectionResetError, BrokenPipeError):
                answer = b""
            assert answer == b""  # closed without an answer
    finally:
        service.stop(server)
    assert not server.path.exists()


def test_serve_settings_are_validated(tmp_path, monkeypatch):
    from vq.core.settings import load_settings

    monkeypatch.delenv("VQ_SEARCH__AUTOSTART")  # conftest's; the file must decide here
    monkeypatch.delenv("VQ_SERVE__ONNX_EXPORT")
    cfg = write_config(tmp_path / "c.yaml", {"serve": {"idle_minutes": -1}})
    with pytest.raises(ConfigError, match="serve.idle_minutes: must not be negative"):
        load_settings(str(cfg))
    cfg = write_config(tmp_path / "c.yaml", {"search": {"autostart": "yes"}})
    with pytest.raises(ConfigError, match="search.autostart: expected bool"):
        load_settings(str(cfg))
    cfg = write_config(tmp_path / "c.yaml", {"serve": {"idle_minutes": 5, "onnx_export": False},
                                             "search": {"autostart": False}})
    s = load_settings(str(cfg))
    assert (s.serve.idle_minutes, s.serve.onnx_export, s.search.autostart) == (5.0, False, False)


def test_the_query_side_never_shares_the_builds_encoder_object(monkeypatch):
    """A query used to reset the build's batch size from 64 to 16 (one shared object)."""
    from vq.core import encoder as core_encoder
    from vq.query import encoders

    class Fake:  # unit arithmetic only: which object, which batch size
        def __init__(self, name, device, batch_size=64, devices=None, processes=1):
            self.batch_size = batch_size

    monkeypatch.setattr(core_encoder, "Encoder", Fake)
    monkeypatch.setattr(core_encoder, "_LOADED", {})
    monkeypatch.setattr(encoders, "_QUERY", {})
    build = core_encoder.shared_model("encoder", "m", "cpu", 64)
    query = encoders.query_encoder("m", "cpu")
    assert query is not build and query is encoders.query_encoder("m", "cpu")
    assert (build.batch_size, query.batch_size) == (64, encoders.QUERY_BATCH)


def test_a_settled_config_is_cached_and_any_edit_misses(xdg, tmp_path):
    import time

    from vq.core import config_cache
    from vq.core.config_file import read_config_file

    cfg = write_config(tmp_path / "c.yaml", {"search": {"pool": 50}})
    fresh = config_cache.stat(cfg)
    assert read_config_file(cfg) == {"search": {"pool": 50}}
    assert config_cache.load(cfg, fresh) is None  # just written: not cached yet
    old = time.time() - 60
    os.utime(cfg, (old, old))
    settled = config_cache.stat(cfg)
    assert read_config_file(cfg) == {"search": {"pool": 50}}
    assert config_cache.load(cfg, settled) == {"search": {"pool": 50}}
    cfg.write_text("search: {pool: 60}\n")  # the same size, a new mtime
    assert read_config_file(cfg) == {"search": {"pool": 60}}
    cfg.write_text("search: {pool: 2026-01-01}\n")  # a YAML date: never cached as JSON
    os.utime(cfg, (old, old))
    assert str(read_config_file(cfg)["search"]["pool"]) == "2026-01-01"
    assert config_cache.load(cfg, config_cache.stat(cfg)) is None


@contextlib.contextmanager
def _live_socket(backlog):
    """A socket that listens and never answers, its service lock held as a live one holds it
    (so a refused or queued connect reads as "busy", not "stale")."""
    import fcntl
    import socket

    fd = os.open(runtime.start_lock(), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    path = runtime.service_socket()
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
            server.listen(backlog)
            yield server, path
    finally:
        os.close(fd)


def test_a_wedged_service_never_hangs_a_search(xdg):
    """It accepts and never answers: the client gives up at its deadline, answers None."""
    import threading

    from vq.query.service import client

    held = []
    with _live_socket(1) as (server, path):
        threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
        assert client.request({"op": "info"}, deadline=0.5) is None
        assert path.exists()  # alive (the lock is held): not mistaken for a stale socket
    for conn, _ in held:
        conn.close()


def test_a_full_listen_queue_is_retried_then_given_up(xdg, monkeypatch):
    """Nobody accepts and the queue is full (EAGAIN): retried until the deadline, no error."""
    import socket

    from vq.query.service import client

    calls = []
    real = client._attempt
    monkeypatch.setattr(client, "_attempt", lambda *a: calls.append(1) or real(*a))
    with _live_socket(0) as (_, path):
        waiting = [socket.socket(socket.AF_UNIX) for _ in range(4)]
        for c in waiting:  # fill the queue
            c.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                c.connect(str(path))
        assert client.request({"op": "info"}, deadline=0.5) is None
        for c in waiting:
            c.close()
    assert len(calls) > 1  # retried, not given up at the first EAGAIN


def test_a_stale_socket_with_nobody_holding_the_lock_is_removed(xdg):
    import socket

    from vq.query.service import client

    path = runtime.service_socket()
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(str(path))  # bound, never listening: connect is refused
    assert client.request({"op": "info"}) is None
    assert not path.exists()


def test_the_service_keeps_a_bounded_number_of_client_settings(settings, config_file,
                                                                 tmp_path):
    """One cached entry per config, overrides and cwd: a client searching from every
    folder of a tree must not grow the service without end. The least recently used
    entry goes first; the one in use stays."""
    from vq.query.service import client
    from vq.query.service.handler import SETTINGS_CACHED, Ops

    ops = Ops(settings)
    msg = {"config": str(config_file), "overrides": {}, "fingerprint": client.fingerprint(settings)}
    first = {**msg, "cwd": str(tmp_path)}
    assert ops.settings_for(first) is not None
    for n in range(SETTINGS_CACHED + 10):
        folder = tmp_path / f"d{n}"
        folder.mkdir()
        assert ops.settings_for({**msg, "cwd": str(folder)}) is not None
        assert ops.settings_for(first) is not None  # in use: kept however many come
    assert len(ops._settings) == SETTINGS_CACHED
    kept = ops.settings_for(first)
    assert ops.settings_for(first) is kept  # answered from the cache, not loaded again
    assert str(tmp_path / "d0") not in "".join(ops._settings)  # the oldest went
