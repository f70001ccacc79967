"""Issue 17, item 3: `vq mcp --http` answers only requests with the bearer token and a
Host (and Origin, when sent) naming this server, on every bind address.

Main had no authentication: any local user could read every indexed file, and
bound to 0.0.0.0 a request with ``Host: evil.example`` got 200.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.processes import reap
from vq.cli.mcp import parse_address
from vq.core.errors import VqError
from vq.query.mcp.http import allowed_hosts, default_token_file, load_token

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(config_file: Any, bind: str, *extra: str,
                env: dict[str, str] | None = None) -> Iterator[int]:
    """`vq mcp --http` on a free port, answering connections, for the ``with`` body."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config_file),
                               "mcp", "--http", f"{bind}:{port}", *extra],
                              stderr=subprocess.PIPE, text=True,
                              env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 90
        while server.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)  # poll interval, bounded by the deadline
        assert server.poll() is None, server.stderr.read()
        yield port
    finally:
        reap(server, signal.SIGTERM, timeout=30)


def post(port: int, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        base = {"Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
        conn.request("POST", "/mcp", body=INIT, headers={**base, **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def status_tool(port: int, token: str) -> Any:
    async def main() -> Any:
        with anyio.fail_after(60):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                          timeout=60) as http, \
                    Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp",
                                                  http_client=http)) as client:
                return await client.call_tool("status", {})

    return anyio.run(main)


@pytest.mark.model
def test_loopback_http_needs_the_token_and_a_local_host(built, config_file):
    assert parse_address("8765") == ("127.0.0.1", 8765)
    assert parse_address("[::1]:8765") == ("::1", 8765)
    with http_server(config_file, "127.0.0.1") as port:
        token_file = default_token_file()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        good = {"Authorization": f"Bearer {token}", "Host": f"127.0.0.1:{port}"}
        assert post(port, {"Host": f"127.0.0.1:{port}"}) == 401
        assert post(port, {**good, "Authorization": "Bearer wrong" + token[5:]}) == 401
        assert post(port, {**good, "Host": f"evil.example:{port}"}) == 421
        assert post(port, {**good, "Origin": "http://evil.example"}) == 403
        assert post(port, {**good, "Origin": f"http://localhost:{port}"}) == 200
        assert post(port, good) == 200
        result = status_tool(port, token)
        assert not result.is_error and result.structured_content["vaults"][0]["files"] == 4


@pytest.mark.model
def test_wildcard_bind_still_checks_host_and_token(built, config_file, monkeypatch):
    monkeypatch.setenv("VQ_MCP_TOKEN", "t" * 40)
    with http_server(config_file, "0.0.0.0", "--allow-host", "vq.internal") as port:
        token = {"Authorization": "Bearer " + "t" * 40}
        assert post(port, {**token, "Host": "evil.example"}) == 421
        assert post(port, {**token, "Host": f"evil.example:{port}"}) == 421
        assert post(port, {"Host": f"127.0.0.1:{port}"}) == 401
        assert post(port, {**token, "Host": f"vq.internal:{port}"}) == 200
        assert not status_tool(port, "t" * 40).is_error
    assert not default_token_file().exists()  # the environment's token was used


def test_token_file_is_private_and_refused_when_others_can_read_it(tmp_path, monkeypatch):
    path = tmp_path / "cfg" / "tok"
    token, where = load_token(path)
    assert len(token) >= 32 and where == str(path) and load_token(path)[0] == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chmod(path, 0o644)
    with pytest.raises(VqError, match="can be read by other users"):
        load_token(path)
    monkeypatch.setenv("VQ_MCP_TOKEN", "short")
    with pytest.raises(VqError, match="shorter than"):
        load_token(path)


def test_allowed_hosts_follow_the_bind_address():
    assert allowed_hosts("127.0.0.1", 8765) == {"127.0.0.1:8765", "localhost:8765",
                                                "[::1]:8765"}
    assert allowed_hosts("192.0.2.7", 81) == {"192.0.2.7:81"}
    wild = allowed_hosts("0.0.0.0", 81, ["vq.internal"])
    assert {"127.0.0.1:81", "vq.internal:81", socket.gethostname().lower() + ":81"} <= wild
    assert "evil.example:81" not in wild
