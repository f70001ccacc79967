"""Compare the manifest with a stat walk: what to skip, re-stamp, re-chunk or delete.

Cheap first, exact second: equal size and mtime_ns (and no recorded error)
means unchanged without reading the file; anything else is read and hashed by
the build, which then decides between a re-stamp and a re-chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vq.core.store import Index
from vq.indexer.discover import Discovery, FileEntry

Key = tuple[str, str]


@dataclass(frozen=True)
class ManifestRow:
    size: int
    mtime_ns: int
    hash: str
    chunks: int
    error: str | None


@dataclass
class Plan:
    unchanged: int = 0
    to_read: list[FileEntry] = field(default_factory=list)
    deleted: list[Key] = field(default_factory=list)
    pruned_vaults: list[str] = field(default_factory=list)


DUPLICATE = ManifestRow(-1, -1, "", 0, None)


def read_manifest(index: Index) -> dict[Key, ManifestRow]:
    """One row per file; a file listed twice (two builders raced) reads as DUPLICATE,
    which is stale to everyone, and the build rewrites its rows from scratch."""
    cols = ["vault", "path", "size", "mtime_ns", "hash", "chunks", "error"]
    table = index.files.search().select(cols).limit(None).to_arrow()
    data = table.to_pydict()
    out: dict[Key, ManifestRow] = {}
    for v, p, s, m, h, c, e in zip(*(data[c] for c in cols), strict=True):
        out[(v, p)] = DUPLICATE if (v, p) in out else ManifestRow(s, m, h, c, e)
    return out


def reconcile(manifest: dict[Key, ManifestRow], found: Discovery, configured: set[str]
              ) -> Plan:
    """``configured``: every vault id in config (a vault outside it is pruned)."""
    plan = Plan()
    seen: set[Key] = set()
    for entry in found.files:
        key = (entry.vault, entry.path)
        seen.add(key)
        old = manifest.get(key)
        if old and old.error is None and old.size == entry.size and old.mtime_ns == entry.mtime_ns:
            plan.unchanged += 1
        else:
            plan.to_read.append(entry)
    seen.update((p.vault, p.path) for p in found.problems)
    walked = set(found.walked_vaults)
    for key in manifest:
        if key[0] in walked and key not in seen:
            plan.deleted.append(key)
    plan.pruned_vaults = sorted({v for v, _ in manifest} - configured)
    return plan
