"""Issue 37, item 5, for `vq ui` too: a silent connection flood holds at most
``per_peer`` server-side sockets per address (on main: one per connection, unbounded),
and the dashboard serves again once the flood lets go."""

from __future__ import annotations

import os
import socket
import time
from urllib.parse import urlsplit

import pytest

from vq.query.http_limits import ConnectionLimits

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="counts fds in /proc")


def sockets_here() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            continue  # closed while we looked
    return count


def test_a_silent_flood_is_capped_per_peer(live):
    where = urlsplit(live.base)
    cap, flood_size = ConnectionLimits().per_peer, 60
    before = sockets_here()
    flood = [socket.create_connection((where.hostname, where.port)) for _ in range(flood_size)]
    try:
        most = before + flood_size + cap  # our client ends, plus what the server keeps
        deadline = time.monotonic() + 30
        while sockets_here() > most and time.monotonic() < deadline:
            time.sleep(0.05)  # poll interval, bounded by the deadline
        assert sockets_here() <= most, f"server kept {sockets_here() - before - flood_size}"
    finally:
        for s in flood:
            s.close()
    deadline = time.monotonic() + 30  # the server lets go of the flood and serves again
    while time.monotonic() < deadline:
        try:
            if live.http().request("GET", "/").status < 500:
                break
        except OSError:
            pass
        time.sleep(0.05)  # poll interval, bounded by the deadline
    assert live.http().request("GET", "/").status < 500
