"""`vq ui` under a silent connection flood: the server keeps at most ``per_peer``
connections from one address, closes the rest as it accepts them, and serves again
once the flood lets go. Counted from the client ends the server closed, so other
sockets of this process (the test runs the server in-process) do not blur it."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from vq.query.http_limits import ConnectionLimits


def still_open(flood: list[socket.socket]) -> int:
    """Client ends the server has not closed (it closed those past the cap at accept)."""
    count = 0
    for s in flood:
        try:
            s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # b"": closed by the server
        except BlockingIOError:
            count += 1  # open, nothing sent: a connection the server keeps
        except OSError:
            continue  # reset by the server
    return count


def test_a_silent_flood_is_capped_per_peer(live):
    where = urlsplit(live.base)
    limits, flood_size = ConnectionLimits(), 60
    flood = [socket.create_connection((where.hostname, where.port)) for _ in range(flood_size)]
    try:
        # One reading of both sides at a time (a second count could catch the server
        # mid-accept of its backlog). The cap shows as 1..per_peer connections kept
        # while the rest were closed at once; without it all 60 stay open until the
        # header timeout closes every one of them.
        deadline = time.monotonic() + limits.header_seconds
        while True:
            kept = still_open(flood)
            if kept <= limits.per_peer or time.monotonic() > deadline:
                break
            time.sleep(0.02)  # poll interval, bounded by the deadline
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
