"""Issue 37, item 5: a pre-auth connection flood does not take `vq mcp --http` down.

On main every accepted connection kept a descriptor until the client closed it,
whatever it sent (nothing at all, or a header a byte at a time): the token is
checked per request, so a flood that never finished a request exhausted the
server's descriptors. Now one address gets ``--max-per-peer`` connections, all
of them ``--max-connections``, and a connection that sends no complete request
headers within ``--header-timeout`` is closed.
"""

from __future__ import annotations

import contextlib
import http.client
import socket

import pytest

from tests.conftest import one_note_index
from tests.flood import kept_after_flood
from tests.service.test_mcp_http import INIT, http_server

TOKEN = "a-long-enough-test-token-0123456789"
ENV = {"VQ_MCP_TOKEN": TOKEN}


def initialize(port: int, source: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                      source_address=(source, 0))
    try:
        conn.request("POST", "/mcp", body=INIT, headers={
            "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"})
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.fixture
def cfg(tmp_path, test_models):
    return one_note_index(tmp_path, "some text")


def test_a_silent_flood_is_capped_per_peer_and_others_are_still_served(cfg):
    with http_server(cfg, "127.0.0.1", "--max-per-peer", "8", "--max-connections", "20",
                     "--header-timeout", "600", env=ENV) as port:
        flood = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
        try:
            kept = kept_after_flood(flood, 8, 60)
            assert 1 <= kept <= 8, f"{kept} of 60 flood connections kept (cap 8)"
            assert initialize(port, "127.0.0.2") == 200  # another peer gets in
        finally:
            for s in flood:
                s.close()


def test_a_connection_that_sends_no_request_is_closed_after_the_header_timeout(cfg):
    with http_server(cfg, "127.0.0.1", "--header-timeout", "1", env=ENV) as port:
        silent = socket.create_connection(("127.0.0.1", port))
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
        for s in (silent, slow):
            s.settimeout(120)
            with contextlib.suppress(ConnectionResetError):
                assert s.recv(1) == b""  # closed by the server, not by a timeout here
            s.close()
        assert initialize(port, "127.0.0.1") == 200
