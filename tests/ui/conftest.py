"""A real dashboard on a real port for each test: uvicorn in a thread, a real LanceDB
index built with the hash test encoder, real HTTP (and, for ``browser`` tests, a real
headless Chromium)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_MODEL, write_config

START_DEADLINE = 60.0


@dataclass
class Live:
    """A running dashboard: its base URL, the token URL and its context."""

    base: str
    url: str
    ctx: Any
    config: Path
    server: Any

    def http(self, cookie: bool = True) -> Http:
        """A plain HTTP client for this server, with the session cookie unless told not to."""
        return Http(self.base, self.ctx.session if cookie else None)


@dataclass
class Reply:
    status: int
    headers: Any
    text: str


class Http:
    """http.client with no redirects followed and no cookie jar: what a test sends is
    exactly what the server sees (``headers`` may replace Host or add Origin)."""

    def __init__(self, base: str, session: str | None) -> None:
        self.base, self.session = base, session

    def request(self, method: str, path: str, body: str | bytes | None = None,
                headers: dict[str, str] | None = None) -> Reply:
        import http.client
        from urllib.parse import urlsplit

        from vq.query.ui.guard import COOKIE

        where = urlsplit(self.base)
        conn = http.client.HTTPConnection(where.hostname, where.port, timeout=120)
        head = dict(headers or {})
        if self.session is not None and "Cookie" not in head:
            head["Cookie"] = f"{COOKIE}={self.session}"
        if isinstance(body, str):
            head.setdefault("Content-Type", "application/x-www-form-urlencoded")
        try:
            conn.request(method, path, body=body, headers=head)
            response = conn.getresponse()
            return Reply(response.status, response.headers,
                         response.read().decode("utf-8", "replace"))
        finally:
            conn.close()

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, form: dict[str, str], **kwargs: Any) -> Reply:
        from urllib.parse import urlencode

        return self.request("POST", path, body=urlencode(form), **kwargs)


def start(ctx: Any, config: Path) -> Live:
    from vq.query.ui.serve import bind, server

    bound = bind("127.0.0.1", 0)
    srv = server(ctx, bound)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [bound.sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_DEADLINE
    while not srv.started:
        assert thread.is_alive(), "the dashboard's server thread died"
        assert time.monotonic() < deadline, "the dashboard did not start"
        time.sleep(0.01)  # polling the server's own started flag, with a deadline
    base = f"http://127.0.0.1:{bound.port}"
    return Live(base, bound.url(ctx.token), ctx, config, srv)


def stop(live: Live) -> None:
    live.server.should_exit = True


@pytest.fixture
def ui_config(tmp_path, vault, test_models) -> Path:
    """A config over the shared notes tree, encoded by the torch-free hash encoder."""
    return write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "model": TEST_MODEL,
        "vaults": {"notes": {"path": str(vault), "kind": "notes"}},
    })


@pytest.fixture
def ui_built(ui_config) -> Path:
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    assert locked_build(load_settings(str(ui_config))).outcome == "ok"
    return ui_config


def make_live(config: Path, read_only: bool = False) -> Iterator[Live]:
    from vq.query.ui.context import UiContext
    from vq.query.ui.serve import new_token

    live = start(UiContext(str(config), new_token(), {}, read_only), config)
    try:
        yield live
    finally:
        stop(live)


@pytest.fixture
def live(ui_built) -> Iterator[Live]:
    yield from make_live(ui_built)


@pytest.fixture
def live_read_only(ui_built) -> Iterator[Live]:
    yield from make_live(ui_built, read_only=True)


# --- a real headless Chromium (Debian's chromium + chromium-driver), driven by selenium ----

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
# Read at import, before the autouse fixture clears CI for the tests' own subprocesses.
IN_CI = __import__("os").environ.get("CI", "").lower() == "true"
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--window-size=1280,900")


def _missing_browser() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        return (f"no {' or '.join(missing)}: browser tests need Debian's chromium and "
                "chromium-driver (apt-get install chromium chromium-driver)")
    return None


@pytest.fixture(scope="module")
def chromium(tmp_path_factory) -> Iterator[Any]:
    """One headless Chromium per test module, with a fresh profile; in CI a missing
    browser fails the run instead of skipping it."""
    why = _missing_browser()
    if why:
        if IN_CI:
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager must not download
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium) -> Any:
    """The module's browser with no cookies (so no session) and a desktop window."""
    chromium.execute_cdp_cmd("Network.clearBrowserCookies", {})
    chromium.set_window_size(1280, 900)
    return chromium
