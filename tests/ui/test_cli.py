"""`vq ui` as a user runs it: the URL on stdout, a working session, Ctrl-C; a bind
beyond loopback refused without --allow-remote."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from tests.conftest import run_vq

DEADLINE = 120.0


def test_a_bind_beyond_loopback_needs_allow_remote(ui_config):
    done = run_vq("--config", ui_config, "ui", "--host", "0.0.0.0", "--no-open")
    assert done.returncode == 2
    assert "beyond this machine" in done.stderr and "--allow-remote" in done.stderr


def test_a_taken_port_is_one_error_with_the_fix(ui_config):
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = run_vq("--config", ui_config, "ui", "--port", port, "--no-open")
    assert done.returncode == 2
    assert "already in use" in done.stderr and f"vq ui --port {port + 1}" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("remote", [False, True])
def test_vq_ui_prints_a_token_url_that_opens_a_session(ui_built, remote):
    host = ["--host", "0.0.0.0", "--allow-remote"] if remote else []
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(ui_built), "ui",
                             "--port", "0", "--no-open", *host], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        url = proc.stdout.readline().strip()  # blocks until the server printed it
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        where = urlsplit(url)
        conn = http.client.HTTPConnection(where.hostname, where.port, timeout=DEADLINE)
        conn.request("GET", f"/?{where.query}")
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 303 and "HttpOnly" in reply.headers["set-cookie"]
        conn.request("GET", "/health", headers={"Cookie": reply.headers["set-cookie"]
                                                .split(";")[0]})
        page = conn.getresponse()
        assert page.status == 200 and "vq doctor" in page.read().decode()
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode in (0, 130), err
    assert ("warning: listening on 0.0.0.0" in err) is remote


PROBE = """
import runpy, sys
sys.argv = ["vq", "--help"]
try:
    runpy.run_module("vq", run_name="__main__")
except SystemExit:
    pass
print("HEAVY", sorted(m for m in ("starlette", "jinja2", "uvicorn", "torch") if m in sys.modules))
"""


def test_vq_help_lists_ui_without_importing_it():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=DEADLINE)
    assert "  ui " in done.stdout and "dashboard" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "HEAVY []"
    help_ui = run_vq("ui", "--help")
    assert help_ui.returncode == 0 and "--read-only" in help_ui.stdout
