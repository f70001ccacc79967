"""Issue 37, item 9: the service in unusual homes.

On main an ``XDG_RUNTIME_DIR`` belonging to someone else (``su`` without ``-``)
made every search exit 2, one longer than the socket path limit crashed
`vq serve`, and a stopped (SIGSTOP) service cost each search two 20 s deadlines
while `vq status` called it "not running".
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import one_note_index, run_vq, wait_for
from vq.core import runtime
from vq.query.service import client


@pytest.fixture
def short_home(monkeypatch):
    """A short private folder (a socket path has ~100 bytes), removed afterwards."""
    folder = tempfile.mkdtemp(prefix="vqh")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    monkeypatch.setenv("TMPDIR", folder)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def cfg(tmp_path, test_models):
    return one_note_index(tmp_path, "the walrus note")


@contextlib.contextmanager
def service(cfg):
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(cfg), "serve"],
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: proc.poll() is not None or client.info())
        assert proc.poll() is None, proc.stderr.read()
        yield proc
    finally:
        # SIGKILL: on SIGTERM a service still preloading its model waits for that (up to
        # 120 s on a loaded machine), which this teardown need not test
        proc.kill()
        proc.wait(timeout=60)
        proc.stderr.close()


def test_an_xdg_runtime_dir_of_another_user_falls_back_to_the_per_user_folder(
        short_home, monkeypatch):
    other = short_home / "run-user-1000"
    other.mkdir(mode=0o700)
    if os.geteuid() == 0:
        os.chown(other, pwd.getpwnam("nobody").pw_uid, -1)
    else:
        other.chmod(0o500)  # not writable: we cannot make our folder in it
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(other))
    assert runtime.runtime_dir() == short_home / f"vq-{os.getuid()}"
    assert not (other / "vq").exists()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short_home / "missing"))
    assert runtime.runtime_dir() == short_home / f"vq-{os.getuid()}"


def test_a_runtime_dir_too_long_for_a_socket_falls_back_and_serve_works(
        short_home, monkeypatch, cfg, tmp_path):
    deep = short_home / ("x" * 60) / ("y" * 60)
    deep.mkdir(parents=True, mode=0o700)
    deep.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    path = runtime.service_socket()
    assert len(os.fsencode(str(path))) <= runtime.SOCKET_PATH_MAX
    with service(cfg):
        found = run_vq("--config", cfg, "search", "walrus", "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(run_vq("--config", cfg, "status", "--json").stdout
                          )["service"]["state"] == "running"


def test_a_stopped_service_is_not_asked_and_status_says_not_answering(
        short_home, cfg, tmp_path, monkeypatch):
    with service(cfg) as proc:
        os.kill(proc.pid, signal.SIGSTOP)
        wait_for(lambda: client.stopped() == proc.pid)
        asked = []
        monkeypatch.setattr(client, "_attempt", lambda *a: asked.append(a) or None)
        assert client.request({"op": "info"}) is None and asked == []
        status = json.loads(run_vq("--config", cfg, "status", "--json").stdout)
        assert status["service"]["state"] == "not answering"
        assert f"kill -CONT {proc.pid}" in status["service"]["fix"]
        assert "not answering" in run_vq("--config", cfg, "status").stdout


def test_a_service_that_timed_out_costs_one_deadline_for_all_processes(short_home,
                                                                        monkeypatch):
    """A wedged service (alive, holding its lock, never answering): one timeout, then
    this process and the user's others (through the 0600 note) leave it alone instead
    of each waiting out the deadline again."""
    lock = runtime.start_lock()
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, str(os.getpid()).encode())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(runtime.service_socket()))
    listener.listen(8)  # accepts into the queue; nobody ever answers
    monkeypatch.setattr(client, "_silent", {})
    monkeypatch.setattr(client, "DEADLINE", 0.5)  # a search's deadline, short for the test
    try:
        assert client.request({"op": "info"}, deadline=0.5) is None
        asked = []
        real = client._attempt
        monkeypatch.setattr(client, "_attempt", lambda *a: asked.append(a) or real(*a))
        assert client.request({"op": "info"}, deadline=0.5) is None and asked == []
        # another process of the user: it reads the note instead of waiting again
        monkeypatch.setattr(client, "_silent", {})
        note = runtime.silent_file()
        assert stat.S_IMODE(note.stat().st_mode) == 0o600
        assert client.request({"op": "info"}, deadline=0.5) is None and asked == []
        # a note about another service (a new pid holds the lock) is not believed
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getppid()).encode())
        assert client.request({"op": "info"}, deadline=0.5) is None and len(asked) == 1
    finally:
        listener.close()
        os.close(fd)
