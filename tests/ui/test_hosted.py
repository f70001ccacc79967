"""The dashboard served by the resident service: a real `vq serve --ui` process, `vq ui`
printing that service's URL instead of starting a second server, the token file kept
under the socket's rules, and a real browser searching through the service."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from urllib.parse import urlencode, urlsplit

import pytest

from tests.conftest import run_vq, wait_for
from vq.core import runtime
from vq.core.errors import ServiceFileUnsafe
from vq.query.ui import hosted

DEADLINE = 180.0


@pytest.fixture
def private_runtime(monkeypatch):
    """A private runtime folder of this test's own (short: a socket path has ~100 bytes)."""
    folder = tempfile.mkdtemp(prefix="vqt")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class Served:
    """A `vq serve` subprocess and the index it serves."""

    def __init__(self, config, *flags: str) -> None:
        from vq.core.settings import load_settings

        self.config, self.err = config, None
        self.index_dir = load_settings(str(config)).index_dir
        self.proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config),
                                      "serve", *flags], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)

    def ready(self, check) -> object:
        """Poll ``check()`` until truthy; the service dying first fails with its stderr."""
        def done():
            if self.proc.poll() is not None:
                raise AssertionError(f"vq serve exited: {self.proc.stderr.read()}")
            return check()
        return wait_for(done, DEADLINE)

    def stop(self) -> str:
        if self.err is None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            _, self.err = self.proc.communicate(timeout=DEADLINE)  # reads, closes the pipe
        return self.err


@pytest.fixture
def served_ui(ui_built, private_runtime):
    served = Served(ui_built, "--ui")
    try:
        served.dashboard = served.ready(lambda: hosted.find(served.index_dir))
        yield served
    finally:
        served.stop()


def _get(url: str, path: str, cookie: str | None = None) -> tuple[int, dict, str]:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=DEADLINE)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        reply = conn.getresponse()
        return reply.status, dict(reply.headers), reply.read().decode("utf-8", "replace")
    finally:
        conn.close()


@pytest.mark.slow
def test_vq_ui_prints_the_services_dashboard_and_its_token_guards_it(served_ui):
    pid, url = served_ui.proc.pid, served_ui.dashboard["url"]
    done = run_vq("--config", served_ui.config, "ui", "--no-open", timeout=DEADLINE)
    assert done.returncode == 0, done.stderr  # it returned: no second server is running
    assert done.stdout.strip() == url and f"pid {pid}" in done.stderr
    assert urlsplit(url).port == served_ui.dashboard["port"]

    status, _, text = _get(url, "/?" + urlencode({"q": "rollback"}))
    assert status == 401 and "no session" in text  # no cookie: refused
    status, headers, _ = _get(url, "/?" + urlsplit(url).query)
    assert status == 303 and "HttpOnly" in headers["set-cookie"]
    cookie = headers["set-cookie"].split(";")[0]
    status, _, page = _get(url, "/?" + urlencode({"q": "rollback release redeploy"}), cookie)
    assert status == 200 and "notes:deploy.md" in page
    assert f"encoded by service pid {pid}" in page  # the service's model, not a second one
    status, _, health = _get(url, "/health", cookie)
    assert status == 200, health
    assert f"served by the resident service itself: pid {pid}; models vq-test/hash-384" in health
    assert served_ui.index_dir in health

    err = served_ui.stop()
    assert f"dashboard (editable) on http://127.0.0.1:{served_ui.dashboard['port']}/" in err
    assert urlsplit(url).query not in err  # the token is never logged
    assert not runtime.dashboard_file(served_ui.index_dir).exists()  # gone with the service


@pytest.mark.slow
def test_a_service_serves_no_dashboard_unless_asked(ui_built, private_runtime):
    from vq.query.service import client

    served = Served(ui_built)
    try:
        served.ready(lambda: client.info())
        assert hosted.find(served.index_dir) is None
        assert not runtime.dashboard_file(served.index_dir).exists()
    finally:
        served.stop()


def _dashboard_file(index_dir: str, pid: int) -> object:
    path = runtime.dashboard_file(index_dir)
    runtime.write_private(path, json.dumps({"url": "http://127.0.0.1:9/?token=t", "pid": pid,
                                            "port": 9, "read_only": False}))
    return path


def test_the_token_file_is_private_and_trusted_only_as_the_socket_is(private_runtime):
    path = _dashboard_file("/some/index", os.getpid())
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert hosted.find("/some/index") is None  # no service holds the lock: a dead one's file
    path.chmod(0o644)
    with pytest.raises(ServiceFileUnsafe, match="others may read it"):
        hosted.find("/some/index")
    path.unlink()
    elsewhere = runtime.runtime_dir() / "planted.json"
    elsewhere.write_text("{}")
    path.symlink_to(elsewhere)
    with pytest.raises(ServiceFileUnsafe, match="symbolic link"):
        hosted.find("/some/index")


def test_a_file_is_believed_only_while_its_writer_holds_the_service_lock(private_runtime):
    from vq.query.service.server import claim

    fd = claim()  # this process is "the service" now
    try:
        _dashboard_file("/some/index", os.getpid() + 1)
        assert hosted.find("/some/index") is None  # another pid wrote it: stale
        _dashboard_file("/some/index", os.getpid())
        assert hosted.find("/some/index")["port"] == 9
    finally:
        os.close(fd)
    assert hosted.find("/some/index") is None  # the lock is gone: so is the service


@pytest.mark.browser
@pytest.mark.slow
def test_a_browser_searches_through_the_services_dashboard(browser, served_ui):
    from tests.ui.test_browser import wait_for as wait_css

    browser.get(served_ui.dashboard["url"])
    box = wait_css(browser, "#q")
    box.send_keys("rollback release redeploy\n")
    first = wait_css(browser, "#hits .hit")
    assert "notes:deploy.md" in first.text
    answered = wait_css(browser, "#answered-by")
    assert f"service pid {served_ui.proc.pid}" in answered.text
