"""Open and read a file beneath a directory without following a symlink at any step.

Every read of a vault file goes through here: the build's reader
(``vq.indexer.reading``) and MCP ``get`` (``vq.query.mcp.files``). Checking a
path and then opening it is a race: between the two, a folder on the
way can be swapped for a symlink that leads out (the MCP ``get`` race,
docs/decisions.md#mcp-get-race). So the kernel resolves the
path relative to an open directory and refuses every link:

* Linux >= 5.6: ``openat2(dirfd, path, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)``
  in one call (through ``ctypes``: Python has no wrapper).
* elsewhere (older kernels, seccomp filters that hide ``openat2``, macOS): one
  ``open(part, O_NOFOLLOW | O_DIRECTORY, dir_fd=...)`` per folder, then the file
  with ``O_NOFOLLOW``, each relative to the folder opened before.

Either way what is opened is what is checked: the caller ``fstat``s the fd, and
``read_regular`` reads a regular file only, never more than the size the walk saw
(a file swapped for a FIFO after the walk used to hang a build holding the lock;
one that grew after the walk bypassed ``max_file_bytes``).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import sys
from collections.abc import Sequence

SYS_OPENAT2 = 437  # the same number on every Linux architecture (new-style syscall table)
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
LINK_ERRORS = (errno.ELOOP, errno.EXDEV, errno.ENOTDIR)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang the open


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_openat2_works: bool | None = None if sys.platform.startswith("linux") else False


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _openat2(dirfd: int, rel: str, flags: int) -> int | None:
    """The fd, or None when this kernel (or its seccomp filter) has no openat2."""
    global _openat2_works
    if _openat2_works is False:
        return None
    libc = _libc()
    how = _OpenHow(flags | _CLOEXEC, 0,
                   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
    fd = libc.syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dirfd),
                      ctypes.c_char_p(os.fsencode(rel)), ctypes.byref(how),
                      ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        _openat2_works = True
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and not _openat2_works:
        _openat2_works = False  # never worked here: use the portable walk from now on
        return None
    raise OSError(err, os.strerror(err), rel)


def _walk(dirfd: int, parts: Sequence[str], flags: int) -> int:
    """Descend one folder at a time with O_NOFOLLOW; each step is relative to the last."""
    current = dirfd
    try:
        for part in parts[:-1]:
            step = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                           dir_fd=current)
            if current != dirfd:
                os.close(current)
            current = step
        return os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC, dir_fd=current)
    finally:
        if current != dirfd:
            os.close(current)


def open_beneath(root: str, parts: Sequence[str], use_openat2: bool = True,
                 root_is_real: bool = False) -> int:
    """A read-only, non-blocking fd for ``root/parts...``; ``OSError`` (``LINK_ERRORS``
    for a link).

    ``parts`` are plain names (no "", ".", ".." or separators: the caller checks).
    ``root`` itself is trusted configuration and may be reached through links,
    unless ``root_is_real``: the caller already resolved it (the build's walk did),
    so its last step must not be a link now (a vault root swapped for a symlink
    after the walk is refused with ``ELOOP``/``ENOTDIR``).
    """
    if not parts or any(p in ("", ".", "..") or "/" in p or "\0" in p for p in parts):
        raise ValueError(f"not a plain relative path: {parts!r}")
    flags = os.O_RDONLY | _NONBLOCK
    dirfd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC
                    | (_NOFOLLOW if root_is_real else 0))
    try:
        if use_openat2:
            fd = _openat2(dirfd, "/".join(parts), flags)
            if fd is not None:
                return fd
        return _walk(dirfd, parts, flags)
    finally:
        os.close(dirfd)


class NotRegular(OSError):
    """The opened file is a FIFO, a device, a socket or a folder: nothing to read."""


class Grew(OSError):
    """The opened file is larger than the caller's bound (the size the walk saw)."""


def read_head(fd: int, size: int) -> bytes:
    """The first ``size`` bytes of ``fd`` if it is a regular file; closes ``fd``."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        return os.read(fd, size)
    finally:
        os.close(fd)


def read_ends(fd: int, size: int) -> bytes:
    """The first and last ``size`` bytes of ``fd`` if it is a regular file, a newline
    between them (once for a file of at most ``2 * size``); closes ``fd``."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        return os.pread(fd, size, 0) + b"\n" + os.pread(fd, size, max(size, info.st_size - size))
    finally:
        os.close(fd)


def read_regular(fd: int, limit: int) -> bytes:
    """All of ``fd`` if it is a regular file of at most ``limit`` bytes; closes ``fd``.

    The size is checked on the opened file, and the read stops one byte past
    ``limit`` whatever ``fstat`` said, so a file growing while it is read cannot
    make the caller hold more than ``limit + 1`` bytes.
    """
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        if st.st_size > limit:
            raise Grew(errno.EFBIG, f"{st.st_size} bytes")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise Grew(errno.EFBIG, f"more than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)
