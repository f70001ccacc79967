"""Preprocessing hooks: an external command turns a file into Markdown or text for vq.

Configured per extension (``hooks: {".docx": "pandoc -t gfm {path}"}``). The
command line is split like a shell would (``shlex``) but never run by one:
``{path}`` inside an argument is replaced by the file's absolute path, so a
file name with spaces, quotes or ``$(...)`` is only ever one argument. During a
build the hook reads a private copy of the bytes vq read confined to the vault
(``hook_text_of``), in an owner-only temporary folder that is also its working
folder: a file swapped for a link after the walk cannot make the hook read what
the link leads to. It has no standard input, and its whole process group is
killed at the timeout (a shell script's children included). Its stdout, decoded
as UTF-8, is chunked by the Markdown handler.

A hook that exits non-zero, times out, prints more than ``hook_max_bytes``,
cannot start or prints nothing raises
``HookFailed``: an error for that file, never for the build. ``check_hooks``
(``vq hooks check``) runs each configured hook once on a sample and reports.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from vq.core.errors import VqError
from vq.core.settings import Settings
from vq.core.trust import require_trusted
from vq.indexer.handlers.base import HandlerError, Limits
from vq.indexer.handlers.markdown import markdown_handler

PLACEHOLDER = "{path}"
_STDERR_TAIL = 200
_STDERR_KEEP = 4096
_READ = 1 << 16
DEFAULT_MAX_BYTES = 20_000_000  # the hook_max_bytes default


class HookFailed(HandlerError):
    """The hook did not produce text for this file; ``str(exc)`` says why and what to do."""


@dataclass(frozen=True)
class HookRun:
    """One run of a hook; ``status`` is None when it timed out or could not start."""

    command: str
    argv: tuple[str, ...]
    status: int | None
    stdout: str
    stderr: str
    seconds: float
    problem: str = ""  # "" when it exited 0 with output

    @property
    def ok(self) -> bool:
        return not self.problem


def hook_name(command: str) -> str:
    """The handler name recorded for files a hook reads: ``hook:pandoc``."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        program = command
    return "hook:" + PurePosixPath(program.replace("\\", "/")).name


def hook_argv(command: str, path: Path) -> list[str]:
    """The argument vector: shell-style splitting, then ``{path}`` filled in per argument."""
    return [arg.replace(PLACEHOLDER, str(path)) for arg in shlex.split(command)]


def run_hook(command: str, path: Path, timeout: float,
             max_bytes: int = DEFAULT_MAX_BYTES) -> HookRun:
    """Run ``command`` on ``path``; never raises (see ``HookRun.problem``).

    Its output is read as it comes, never more than ``max_bytes`` of stdout (a
    hook printing 200 MB used to take the build to 1.6 GB): past that, or past
    the timeout, its process group is killed.
    """
    argv = tuple(hook_argv(command, path.resolve()))
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=path.resolve().parent, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        problem = f"cannot start {argv[0]!r}: {exc.strerror or exc}; install it or fix the hook"
        return HookRun(command, argv, None, "", "", 0.0, problem)
    out, err, cut = _collect(proc, started + timeout, max_bytes)
    status = None if cut == "timeout" else proc.returncode
    seconds = round(time.monotonic() - started, 3)
    stdout = out.decode("utf-8-sig", "replace")
    stderr = err.decode("utf-8", "replace")
    problem = (f"printed more than hook_max_bytes ({max_bytes} bytes) and was killed; raise "
               "hook_max_bytes or make the hook print less" if cut == "too much"
               else _problem(status, stdout, stderr, timeout))
    return HookRun(command, argv, status, stdout, stderr, seconds, problem)


def _collect(proc: subprocess.Popen, deadline: float, max_bytes: int
             ) -> tuple[bytes, bytes, str]:
    """(stdout up to ``max_bytes``, the tail of stderr, "" | "timeout" | "too much").

    Both pipes are drained as data arrives, so neither can fill and block the
    hook; the process group is killed when the output or the time runs out.
    """
    out, err = bytearray(), bytearray()
    cut = ""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)  # type: ignore[arg-type]
        sel.register(proc.stderr, selectors.EVENT_READ, err)  # type: ignore[arg-type]
        while sel.get_map() and not cut:
            left = deadline - time.monotonic()
            if left <= 0:
                cut = "timeout"
                break
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, _READ)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if key.data is err:
                    del err[:-_STDERR_KEEP]
                elif len(out) > max_bytes:
                    cut = "too much"
    if not cut:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:  # closed its pipes but kept running
            cut = "timeout"
    if cut:
        _kill_group(proc)
        proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    return bytes(out[:max_bytes]), bytes(err), cut


def hook_text(command: str, path: Path, timeout: float,
              max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The hook's output for ``path``, or ``HookFailed`` naming the hook and its exit status."""
    run = run_hook(command, path, timeout, max_bytes)
    if not run.ok:
        raise HookFailed(f"hook `{command}` {run.problem}")
    return run.stdout


def hook_text_of(command: str, data: bytes, name: str, timeout: float,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """``hook_text`` on a private copy of ``data`` named ``name`` (its extension kept)."""
    with tempfile.TemporaryDirectory(prefix="vq-hook-") as folder:
        copy = Path(folder) / PurePosixPath(name).name
        copy.write_bytes(data)
        return hook_text(command, copy, timeout, max_bytes)


def _problem(status: int | None, stdout: str, stderr: str, timeout: float) -> str:
    if status is None:
        return (f"timed out after {timeout:g}s and was killed; raise hook_timeout_seconds "
                "or make the command faster")
    tail = " ".join(stderr.split())[-_STDERR_TAIL:]
    detail = f": {tail}" if tail else ""
    if status < 0:
        return f"was killed by signal {-status}{detail}"
    if status != 0:
        return f"exited with status {status}{detail}"
    if not stdout.strip():
        return "exited 0 but printed nothing; vq reads Markdown or text from its stdout"
    return ""


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the hook and everything it started, so no child keeps the pipes open.

    A child that called ``setsid`` left the process group, so the group kill
    missed it: its descendants and every process still holding the
    hook's pipes are found in ``/proc`` first and killed one by one."""
    strays = _strays(proc)
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows has no process groups to kill
            proc.kill()
    except ProcessLookupError:
        pass
    for pid in strays:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _strays(proc: subprocess.Popen) -> set[int]:
    """Descendants of the hook, and processes holding its stdout/stderr (Linux /proc)."""
    pipes = {f"pipe:[{os.fstat(p.fileno()).st_ino}]" for p in (proc.stdout, proc.stderr)
             if p is not None}
    children: dict[int, list[int]] = {}
    holders: set[int] = set()
    for pid in _pids():
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{pid}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(pid)
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in pipes
                   for fd in os.listdir(f"/proc/{pid}/fd")):
                holders.add(pid)
    found, todo = set(), [proc.pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return (found | holders) - {os.getpid()}


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc (macOS): the group kill is all there is
        return []


@dataclass(frozen=True)
class HookCheck:
    """One configured hook tried on one sample file (``run`` is None without a sample)."""

    extension: str
    command: str
    sample: str
    run: HookRun | None
    chunks: int = 0

    @property
    def ok(self) -> bool:
        return self.run is not None and self.run.ok

    @property
    def status(self) -> str:
        """"ok", "failed", or "no sample"."""
        return "no sample" if self.run is None else "ok" if self.ok else "failed"

    def to_json(self) -> dict[str, Any]:
        run = self.run
        out: dict[str, Any] = {"extension": self.extension, "command": self.command,
                               "sample": self.sample or None, "status": self.status}
        if run is not None:
            out.update(exit_status=run.status, seconds=run.seconds, chars=len(run.stdout),
                       chunks=self.chunks, problem=run.problem or None,
                       first_line=first_line(run.stdout))
        return out


def check_hooks(settings: Settings, samples: Sequence[Path] = ()) -> list[HookCheck]:
    """Run every configured hook once: on the given sample for its extension, else on
    the first file with that extension in the vaults. Nothing is written."""
    from vq.core.filetypes import suffix

    require_trusted(settings)
    chosen = {suffix(str(p)): p for p in samples}
    unknown = sorted(set(chosen) - set(settings.hooks))
    if unknown:
        raise VqError(f"no hook is configured for {unknown[0]!r} files",
                      f"configured: {', '.join(settings.hooks) or 'none'}; add one under hooks:")
    missing = frozenset(settings.hooks) - set(chosen)
    if missing:
        chosen = {**_find_samples(settings, missing), **chosen}
    limits = Limits(settings.chunk.max_chars, settings.chunk.min_chars)
    out = []
    for ext, command in settings.hooks.items():
        path = chosen.get(ext)
        if path is None:
            out.append(HookCheck(ext, command, "", None))
            continue
        run = run_hook(command, path, settings.hook_timeout_seconds, settings.hook_max_bytes)
        chunks = len(markdown_handler(run.stdout, path.name, limits).chunks) if run.ok else 0
        out.append(HookCheck(ext, command, str(path), run, chunks))
    return out


def first_line(text: str, width: int = 80) -> str:
    line = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _find_samples(settings: Settings, extensions: frozenset[str]) -> dict[str, Path]:
    from vq.core.filetypes import suffix
    from vq.core.walk import SizeCap, discover

    found = discover(settings.vaults, SizeCap.of(settings), extensions)
    out: dict[str, Path] = {}
    for entry in found.files:
        ext = suffix(entry.path)
        if ext in extensions and ext not in out:
            out[ext] = entry.abs_path
    return out
