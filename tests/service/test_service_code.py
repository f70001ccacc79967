"""A service and a client of other vq code (an upgrade, an edited checkout) never mix:
the service refuses to answer, the client searches in-process, `vq status` says why, and
a `vq serve` whose files changed on disk exits so the next search starts the new code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import private_runtime, wait_for
from tests.processes import reap
from tests.service.test_service import start_server, stop_server
from vq.core import code_id
from vq.core.runtime import service_socket
from vq.query.service import client

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(autouse=True)
def runtime_dir():
    with private_runtime("vqc") as folder:
        yield folder


def test_the_code_id_follows_every_code_file_and_nothing_else(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    first = code_id.current([str(tmp_path)])
    assert code_id.current([str(tmp_path)]) == first
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"cache")
    (tmp_path / "pkg" / "notes.txt").write_text("not code")
    assert code_id.current([str(tmp_path)]) == first
    (tmp_path / "pkg" / "a.py").write_text("A = 22\n")  # an edit (its size and mtime)
    edited = code_id.current([str(tmp_path)])
    (tmp_path / "pkg" / "page.html").write_text("<p>new</p>")  # a new template
    assert len({first, edited, code_id.current([str(tmp_path)])}) == 3
    assert code_id.code_id() == code_id.current()  # this process's code, as loaded


def test_a_service_of_other_code_answers_nothing_and_status_says_why(built, config_file,
                                                                   cli, monkeypatch):
    proc = start_server(built.index_dir, config_file)
    try:
        q = {"text": "rollback", "method": "lexical", "limit": 3}
        output = {"json": True, "files": False, "explain": False, "tty": False}
        assert client.search(built, {}, q, output) is not None  # the same code: answered
        monkeypatch.setattr(client, "code_id", lambda: "other-code")
        assert client.search(built, {}, q, output) is None
        assert client.encode("all-MiniLM-L6-v2", ["rollback"], built.index_dir) is None
        found = cli("--config", config_file, "search", "-m", "lexical", "--json", "rollback")
        assert found.exit_code == 0 and "deploy.md" in found.stdout  # searched in-process
        status = cli("--config", config_file, "status")
        assert f"serve  other code: pid {proc.pid}, it runs other vq code" in status.stdout
        doctor = cli("--config", config_file, "doctor")
        assert f"pid {proc.pid}, other code" in doctor.stdout
    finally:
        stop_server(proc)


def test_vq_serve_exits_once_its_code_changes_on_disk(built, config_file, tmp_path):
    """The service compares vq's files on disk with the code it loaded; here the check is
    fast and the "files" are a marker, so no source file of the checkout is touched."""
    marker = tmp_path / "upgraded"
    program = (
        "import pathlib, sys\n"
        "from vq.query.service import server\n"
        "server.CODE_CHECK_SECONDS = 0.05\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "real = server.current\n"
        "server.current = lambda: 'upgraded' if marker.exists() else real()\n"
        "from vq.cli import cli\n"
        "cli(sys.argv[1:])\n")
    proc = subprocess.Popen([sys.executable, "-c", program, "--config", str(config_file),
                             "serve"], stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: proc.poll() is not None or client.info())
        assert proc.poll() is None, proc.stderr.read()
        marker.write_text("")
        code = proc.wait(timeout=180)  # exits by itself, or the test fails at the deadline
        err = proc.stderr.read()
    finally:
        reap(proc)
    assert code == 0, err
    assert "exiting: vq's code changed on disk since this service started" in err
    assert not service_socket().exists()
