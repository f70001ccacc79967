"""Doctor's checks that read the index's files and probe its disk.

Counting rows reads only manifests, so a deleted data file used to pass as
healthy. ``table_checks`` reads a small column of every row of every table,
runs one full-text query and, when there is one, one vector-index query: each
opens the files a search would. ``writable_check`` asks the disk holding
``index_dir`` whether a build could write there, and how much room it has.
"""

from __future__ import annotations

import os
from typing import Any

from vq.core import paths, store
from vq.core.error_mapping import classify
from vq.core.errors import VqError
from vq.core.mounts import mount_of
from vq.core.settings import Settings
from vq.query.doctor.checks import FAIL, OK, SKIP, WARN, Check

LOW_SPACE = 200 * 2**20


def table_checks(index: Any) -> list[Check]:
    try:
        rows = store.probe(index)
    except VqError as exc:
        return [Check("index tables", FAIL, exc.message, exc.fix)]
    out = [Check("index tables", OK, "every row readable: " + ", ".join(
        f"{name} {n}" for name, n in rows.items()))]
    out += [_probe(name, fn) for name, fn in _search_probes(index)]
    return out


def _search_probes(index: Any) -> list[tuple[str, Any]]:
    from vq.core.search_indexes import FTS_INDEX, VECTOR_INDEX, indices

    found = indices(index.chunks)
    probes = []
    if FTS_INDEX in found:
        probes.append(("full-text index reads", lambda: index.chunks.search(
            "probe", query_type="fts").select(["id"]).limit(1).to_list()))
    if VECTOR_INDEX in found:
        probes.append(("vector index reads", lambda: index.chunks.search(
            [0.0] * index.meta.dim, vector_column_name="vector").select(["id"]).limit(1)
            .to_list()))
    return probes


def _probe(name: str, fn: Any) -> Check:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - reported as a failed check
        known = classify(exc, "")
        if known is None:
            raise
        return Check(name, FAIL, known.message, known.fix)
    return Check(name, OK, "one query ran")


def writable_check(settings: Settings) -> Check:
    """Could a build write ``index_dir`` (or create it)? Read-only mounts and missing
    permission fail; little free space warns."""
    name = "index_dir writable"
    if paths.is_uri(settings.index_dir):
        return Check(name, SKIP, "object storage: the store checks writes when a build commits")
    target = os.path.abspath(settings.index_dir)
    while not os.path.isdir(target) and target != os.path.dirname(target):
        target = os.path.dirname(target)
    mount, fstype = mount_of(target)
    fs = f"{mount}" + (f" ({fstype})" if fstype else "")
    vfs = os.statvfs(target)
    if vfs.f_flag & os.ST_RDONLY:
        return Check(name, FAIL, f"{target} is on a read-only filesystem {fs}",
                     f"remount {mount} read-write, or point index_dir at a writable folder")
    if not os.access(target, os.W_OK | os.X_OK):
        return Check(name, FAIL, f"{target} is not writable by this user (filesystem {fs})",
                     f"fix its permissions (chmod u+w {target}) or point index_dir elsewhere")
    free = vfs.f_bavail * vfs.f_frsize
    detail = f"{target} on {fs}, {free / 2**20:.0f} MiB free"
    if free < LOW_SPACE:
        return Check(name, WARN, detail, f"free space on {mount}: a build needs room for "
                     "new table versions before old ones are cleaned up")
    return Check(name, OK, detail)
