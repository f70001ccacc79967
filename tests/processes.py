"""Ending a child process a test started, on every path: signalled if it still runs,
reaped, and its pipes closed (left open, the garbage collector reports them as a
ResourceWarning in whichever test runs then). Standard library only: the reliability
harness and the bench import it too."""

from __future__ import annotations

import signal
import subprocess


def reap(proc: subprocess.Popen, sig: int = signal.SIGKILL, timeout: float = 60) -> int:
    """Send ``sig`` if ``proc`` still runs, wait for it, close its pipes; its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
    code = proc.wait(timeout=timeout)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None and not pipe.closed:
            pipe.close()
    return code
