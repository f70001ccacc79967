"""A silent connection flood, counted from the client's side.

Counting the server's sockets in /proc blurs the cap with every other socket the
server holds (the in-process UI server shares the test's process; the MCP server
opens its own as it serves), so both flood tests count the flood's client ends the
server has closed instead: the cap shows as 1..``per_peer`` kept, the rest closed
at accept, where an uncapped server keeps all of them until the header timeout.
"""

from __future__ import annotations

import socket
import time


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


def kept_after_flood(flood: list[socket.socket], cap: int, seconds: float) -> int:
    """How many of ``flood`` the server keeps once it has accepted its backlog.

    One reading of the client ends at a time, polled until at most ``cap`` are open
    or ``seconds`` pass (a server still accepting its backlog shows more for a while).
    """
    deadline = time.monotonic() + seconds
    while True:
        kept = still_open(flood)
        if kept <= cap or time.monotonic() > deadline:
            return kept
        time.sleep(0.02)  # poll interval, bounded by the deadline
