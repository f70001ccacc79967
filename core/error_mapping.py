"""Turn what LanceDB, pyarrow and the OS raise into the domain errors a user can act on.

LanceDB reports storage trouble as ``RuntimeError("lance error: ...")`` with the
Rust ``io::Error`` text inside (``No space left on device (os error 28)``), so
the errno is read from the message when the exception carries none. ``classify``
returns None for anything it does not recognise: that stays a bug report.
"""

from __future__ import annotations

import errno
import os
import re

from vq.core.errors import IndexCorrupt, VqError, WriteFailed
from vq.core.mounts import mount_of

DISK_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
               errno.EEXIST, errno.ENOTDIR}
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_RUST_SOURCE = re.compile(r",\s*/\S+\.rs:\d+:\d+")
_LANCE = ("lance error", "LanceError")


def os_errno(exc: BaseException) -> int | None:
    if isinstance(exc, OSError) and exc.errno:
        return exc.errno
    found = _OS_ERROR.search(str(exc))
    return int(found.group(1)) if found else None


def first_line(exc: BaseException, width: int = 300) -> str:
    text = _RUST_SOURCE.sub("", (str(exc).strip().splitlines() or [""])[0])
    return text[:width]


def is_storage_error(exc: BaseException) -> bool:
    """An error LanceDB raised while reading its files (not a commit conflict)."""
    text = str(exc)
    return (isinstance(exc, (RuntimeError, OSError, ValueError))
            and any(tag in text for tag in _LANCE) and "onflict" not in text)


def disk_fix(code: int, path: str, mount: str) -> str:
    if code in (errno.ENOSPC, errno.EDQUOT):
        return (f"free space on {mount} (`df -h {mount}`) or point index_dir at a disk with "
                "room; then run the command again")
    if code in (errno.EEXIST, errno.ENOTDIR):
        return (f"{path} (or a folder above it) is a file, not a folder: point index_dir at "
                "a folder, or move the file away")
    if code == errno.EROFS:
        return (f"{mount} is mounted read-only: remount it read-write, or point index_dir "
                "(or --index-dir) at a writable folder")
    return (f"check the permissions of {path} (this user must be able to read and write "
            "it), or point index_dir at a folder that is")


def write_failed(exc: BaseException, path: str) -> WriteFailed | None:
    code = os_errno(exc)
    if code not in DISK_ERRNOS:
        return None
    target = getattr(exc, "filename", None) or path
    mount, fstype = mount_of(str(target))
    return WriteFailed(str(target), code, os.strerror(code), mount, fstype,
                       disk_fix(code, str(target), mount))


def classify(exc: BaseException, location: str = "") -> VqError | None:
    """The domain error behind ``exc`` (a full or read-only disk, a damaged index), or None."""
    if isinstance(exc, VqError):
        return exc
    disk = write_failed(exc, location or ".")
    if disk is not None:
        return disk
    if is_storage_error(exc):
        return IndexCorrupt(location, first_line(exc))
    return None
