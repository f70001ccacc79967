"""`vq ui` under a silent connection flood: the server keeps at most ``per_peer``
connections from one address, closes the rest as it accepts them, and serves again
once the flood lets go. Counted from the client ends the server closed, so other
sockets of this process (the test runs the server in-process) do not blur it."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from tests.flood import kept_after_flood
from vq.query.http_limits import ConnectionLimits


def test_a_silent_flood_is_capped_per_peer(live):
    where = urlsplit(live.base)
    limits, flood_size = ConnectionLimits(), 60
    flood = [socket.create_connection((where.hostname, where.port)) for _ in range(flood_size)]
    try:
        # Without the cap all 60 stay open until the header timeout closes every one.
        kept = kept_after_flood(flood, limits.per_peer, limits.header_seconds)
        assert 1 <= kept <= limits.per_peer, f"{kept} of {flood_size} connections kept"
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
