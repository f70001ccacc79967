"""Where the service's socket lives, who may use it, and how a message is framed.

Standard library only: the `vq search` thin client imports this before it
knows whether it needs anything heavier.

Trust: the socket folder is ``$XDG_RUNTIME_DIR/vq`` or ``/tmp/vq-UID`` (see
``runtime_dir`` for when each is used), created
0700 and used only while it is a real folder owned by this user with mode
0700. Otherwise another local user could pre-create it, put her own socket
there, read the queries and forge the results. Both ends also check the
other's uid with ``SO_PEERCRED`` where the platform has it.
"""

from __future__ import annotations

import fcntl
import os
import socket
import stat
import struct
from pathlib import Path

from vq.core.errors import (
    ServiceDirUnsafe,  # noqa: F401 - callers catch runtime.ServiceDirUnsafe
    ServiceFileUnsafe,
)

MAX_MESSAGE = 8 * 1024 * 1024   # bytes in one request or reply line
BACKLOG = 128                   # listen queue: a burst of clients waits in it, not in a retry


SOCKET_PATH_MAX = 100  # bytes: AF_UNIX allows 108 on Linux, 104 on macOS (NUL included)
SOCKET_NAME = len("serve.sock")


def runtime_dir(create: bool = True) -> Path:
    """The per-user socket folder, checked (and made 0700 when ``create`` and absent).

    ``$XDG_RUNTIME_DIR/vq`` when that folder is this user's own and short enough
    for a socket path, else ``$TMPDIR/vq-UID``, else ``/tmp/vq-UID`` (an
    ``XDG_RUNTIME_DIR`` inherited through ``su`` without ``-`` belongs to someone
    else and made every search exit 2; one too long made `vq serve` crash). Client
    and service compute the same answer from the same environment."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    own = f"vq-{os.getuid()}"
    candidates = [Path(base) / "vq"] if base and _usable_base(Path(base)) else []
    candidates += [Path(os.environ.get("TMPDIR") or "/tmp") / own, Path("/tmp") / own]
    folder = next(c for c in candidates if _fits(c) or c == candidates[-1])
    if create:
        try:
            folder.mkdir(mode=0o700)
            os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
        except FileExistsError:
            pass
    check_private(folder)
    return folder


def _usable_base(base: Path) -> bool:
    """``XDG_RUNTIME_DIR`` as the spec describes it: a folder of ours we can enter."""
    try:
        st = os.stat(base)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and os.access(base, os.W_OK | os.X_OK))


def _fits(folder: Path) -> bool:
    return len(os.fsencode(str(folder))) + 1 + SOCKET_NAME <= SOCKET_PATH_MAX


def check_private(folder: Path) -> None:
    """Refuse a folder that is a link, not ours, or open to anyone else (ServiceDirUnsafe)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return  # nothing there yet: nobody can have planted a socket
    me = os.getuid()
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise ServiceDirUnsafe(str(folder), "it is not a plain folder")
    if st.st_uid != me:
        raise ServiceDirUnsafe(str(folder), f"it is owned by uid {st.st_uid}, not by you "
                                            f"(uid {me})")
    mode = stat.S_IMODE(st.st_mode)
    if mode != 0o700:
        raise ServiceDirUnsafe(str(folder), f"its mode is {mode:04o}, not 0700")


def digest(text: str, size: int = 8) -> str:
    """A short stable hash; ``_blake2`` directly, as ``hashlib`` loads OpenSSL (~10 ms)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter without the builtin module
        from hashlib import blake2b
    return blake2b(text.encode(), digest_size=size).hexdigest()


def service_socket(create: bool = True) -> Path:
    """One service per user: one socket in the private folder, whatever the index."""
    return runtime_dir(create) / "serve.sock"


def start_lock() -> Path:
    """The file a running (or starting) service holds an flock on, for its whole life."""
    return runtime_dir() / "serve.lock"


def service_log() -> Path:
    """Where an autostarted (detached) service writes its stderr."""
    return runtime_dir() / "serve.log"


def silent_file(create: bool = True) -> Path:
    """Where a client that timed out on the service notes it (its pid, when), so the
    user's other processes skip that service for a while instead of each waiting out
    the deadline (``vq.query.service.client``)."""
    return runtime_dir(create) / "serve.silent"


def dashboard_file(index_dir: str, create: bool = True) -> Path:
    """Where a service that serves the dashboard leaves its URL and token for `vq ui`
    (``write_private``; read back only through ``read_private``)."""
    return runtime_dir(create) / f"serve-{digest(index_dir)}.ui.json"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file of ours: made anew beside it (never
    through a link someone planted), then renamed over it, so a reader sees all or nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def read_private(path: Path, limit: int = 64 * 1024) -> str | None:
    """The text of a file that only this user can have written, or None when there is none.

    The socket's rules, for a file that carries a secret: its folder must pass
    ``check_private``; the file must not be a link, must be a plain file owned by this
    user and open to nobody else (ServiceFileUnsafe otherwise)."""
    check_private(path.parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise ServiceFileUnsafe(str(path), "it is a symbolic link") from None
        raise ServiceFileUnsafe(str(path), exc.strerror or str(exc)) from None
    with os.fdopen(fd, "rb") as fh:
        problem = _file_problem(os.fstat(fh.fileno()))
        if problem:
            raise ServiceFileUnsafe(str(path), problem)
        return fh.read(limit).decode("utf-8", "replace")


def _file_problem(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "it is not a plain file"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        return f"its mode is {mode:04o}: others may read it (want 0600)"
    return None


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end, or None where the OS cannot say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def peer_is_me(sock: socket.socket) -> bool:
    uid = peer_uid(sock)
    return uid is None or uid == os.getuid()


def lock_holder() -> int | None:
    """The pid recorded by the service holding (or last holding) the lock."""
    try:
        return int(start_lock().read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None


def is_running() -> bool:
    """True while some process holds the service lock (running, or still starting)."""
    try:
        fd = os.open(start_lock(), os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
