"""Race MCP ``get``'s open against a vault folder flipping to a symlink that leads out.

``python -m tests.reliability.get_race --calls 3000`` opens ``adr/a.md`` through
``open_confined`` while a thread swaps ``adr/`` for a link to a folder holding a
secret and back, and prints, per resolver (``openat2`` and the ``O_NOFOLLOW``
walk), how many opens succeeded and how many read the secret (must be 0). The
check-then-open code it replaced leaked (docs/decisions.md#mcp-get-race).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
from pathlib import Path

from vq.core.settings import Vault
from vq.query.mcp.files import open_confined


def race(vault: Path, outside: Path, use_openat2: bool, calls: int) -> tuple[int, int]:
    """(opens that succeeded, opens that read the outside file)."""
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            os.rename(vault / "adr", vault / "adr.real")
            os.symlink(outside, vault / "adr")
            os.unlink(vault / "adr")
            os.rename(vault / "adr.real", vault / "adr")

    thread = threading.Thread(target=flip)
    thread.start()
    served = leaked = 0
    try:
        for _ in range(calls):
            try:
                fd, _ = open_confined(Vault("v", vault), "adr/a.md", use_openat2)
            except Exception:  # noqa: BLE001 - a refusal is the expected outcome
                continue
            served += 1
            with os.fdopen(fd, "rb") as fh:
                leaked += b"SECRET" in fh.read(100)
    finally:
        stop.set()
        thread.join()
    return served, leaked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="vq-get-race-"))
    vault, outside = base / "vault", base / "outside"
    (vault / "adr").mkdir(parents=True)
    (vault / "adr" / "a.md").write_text("inside\n")
    outside.mkdir()
    (outside / "a.md").write_text("TOP SECRET\n")
    for name, flag in (("openat2", True), ("O_NOFOLLOW walk", False)):
        served, leaked = race(vault, outside, flag, args.calls)
        print(f"{name}: {args.calls} calls, {served} served, {leaked} read outside the vault")


if __name__ == "__main__":
    main()
