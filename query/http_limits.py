"""Caps on `vq mcp --http` connections, enforced before a request is read.

The bearer token is checked per request, so a client that opens connections and
sends nothing (or a header a byte at a time) was never checked at all: a
pre-auth flood exhausted the server's file descriptors and took it down.
``guarded_protocol`` wraps uvicorn's HTTP protocol so that

* a connection past ``per_peer`` from one address, or past ``total`` in all, is
  aborted the moment it is accepted: its descriptor is closed at once, and the
  other peers are still served;
* a connection that has not finished sending a request's headers
  ``header_seconds`` after it opened (or after its last response) is closed.

uvicorn's own ``limit_concurrency`` (503 past ``total`` requests in flight) and
its bound on a header's size stay on as well.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConnectionLimits:
    total: int = 128            # open connections in all (well under the usual 1024 fds)
    per_peer: int = 16          # from one address
    header_seconds: float = 10.0  # to send a request's headers

    def __post_init__(self) -> None:
        if self.total < 1 or self.per_peer < 1 or not self.header_seconds > 0:
            raise ValueError(f"invalid connection limits: {self!r}")


def guarded_protocol(limits: ConnectionLimits) -> type:
    """An uvicorn HTTP protocol class enforcing ``limits`` (one counter per server)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    open_by_peer: Counter[str] = Counter()

    class Guarded(H11Protocol):
        peer: str | None = None
        header_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            peer = str((transport.get_extra_info("peername") or ("?",))[0])
            if (open_by_peer[peer] >= limits.per_peer
                    or sum(open_by_peer.values()) >= limits.total):
                transport.abort()  # closed now: a flood cannot pile up descriptors
                return
            self.peer = peer
            open_by_peer[peer] += 1
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            if self.header_timer is not None:
                self.header_timer.cancel()
            self.header_timer = self.loop.call_later(limits.header_seconds, self._too_slow)

        def _too_slow(self) -> None:
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()  # no complete request headers in time

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.peer is not None:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.peer is None:
                return  # refused in connection_made: nothing of ours to release
            open_by_peer[self.peer] -= 1
            if not open_by_peer[self.peer]:
                del open_by_peer[self.peer]
            self.peer = None
            if self.header_timer is not None:
                self.header_timer.cancel()
            super().connection_lost(exc)

    return Guarded
