"""Which filesystem a path lives on, to spot network filesystems.

Why: on NFS, SMB, sshfs and the like the kernel sees no other client's writes
(no inotify events) and caches attributes, so folder mtimes can lag. The
watcher falls back to the periodic sweep there, and the walk cache keeps no
listings there. Linux only (``/proc/self/mounts``); elsewhere nothing is known
to be remote.
"""

from __future__ import annotations

import os

NETWORK_TYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs",
    "lustre", "gpfs", "beegfs", "davfs", "fuse.sshfs", "fuse.rclone", "fuse.s3fs",
    "fuse.gcsfuse", "fuse.glusterfs", "fuse.cephfs"})
MOUNTS = "/proc/self/mounts"


def mount_of(path: str | os.PathLike[str], mounts: str = MOUNTS) -> tuple[str, str]:
    """(mount point, filesystem type) holding ``path``: the longest mount point above it
    in ``mounts`` (bind mounts included; the later of equals is in effect), else the
    nearest ``ismount`` with an unknown ("") type."""
    probe = os.path.realpath(os.path.abspath(path))
    best, kind = "", ""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = probe == point or probe.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, parts[2]
    if best:
        return best, kind
    while not os.path.ismount(probe):
        probe = os.path.dirname(probe)
    return probe, ""


def fs_type(path: str | os.PathLike[str], mounts: str = MOUNTS) -> str | None:
    """The type of the filesystem mounted deepest above ``path``; None when unknown."""
    return mount_of(path, mounts)[1] or None


def network_fs(path: str | os.PathLike[str], mounts: str = MOUNTS) -> str | None:
    """The filesystem type when ``path`` is on a network filesystem, else None."""
    kind = fs_type(path, mounts)
    return kind if kind in NETWORK_TYPES else None
