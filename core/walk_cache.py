"""Each folder's classified listing, remembered between walks while its mtime holds.

Why: a no-op build and the watcher's periodic sweep walk the whole tree; deciding
for every entry whether it is hidden, ignored, included and claimed cost more
than the walk itself. Adding, removing or renaming an entry changes its
folder's mtime (POSIX), so a folder whose mtime is unchanged has the same names,
and only its files need a stat (edits inside a file never change the folder).
A ``.gitignore`` edit changes no folder mtime, so each listing also keys on the
rules it was classified under (``rules``). Not kept: listings of folders changed
within ``RACY_NS`` of the walk (a change in the same timestamp tick would be
invisible), and any listing on a network filesystem, whose attribute caches
make mtimes unreliable.

The cache also keeps the stats the walk found, so the next walk can say it
found exactly the same files (``Discovery.same_as_cache``), and a ``clean``
record a build writes when that walk left it nothing to do: with the tables at
the same versions, the next identical walk is a no-op without reading the
manifest. It is only a cache: unreadable or foreign, it is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import time
import zlib
from collections.abc import Iterator
from typing import Any

CACHE_NAME = "walk-cache"
FORMAT = 3
RACY_NS = 3_000_000_000  # coarse timestamp ticks (2 s on FAT): younger folders are re-listed

# One folder: (mtime_ns, rules, files, links, dirs, skipped, pruned, stats). ``files``: the
# names classification kept, in walk order; ``links``: those that are symlinks (re-resolved
# every walk); ``dirs``: names to descend; ``skipped``: (reason, count) pairs; ``pruned``:
# (relative path, reason) of folders not descended into; ``stats``: int64 (size, mtime_ns)
# pairs, one per file ((-1, -1): not indexable last time), as bytes: loaded and compared
# whole, without a tuple per file.
Listing = tuple[int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...],
                tuple[tuple[str, int], ...], tuple[tuple[str, str], ...], bytes]


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """The walk and the cache build a small tuple per file, and none holds a cycle; the
    cyclic collector, triggered by their count, kept re-scanning all of them. It runs
    again, as before, when the walk is done."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def rules_key(texts: tuple[str, ...]) -> int:
    """A stable key for the ``.gitignore`` rules in force (crc32, not ``hash``: it must
    agree across processes)."""
    return zlib.crc32("\0".join(texts).encode("utf-8", "surrogateescape"))


class VaultCache:
    """One vault's listings: those read from disk (``old``) and this walk's (``new``).
    ``same`` stays True while every folder and file matches the last walk's."""

    def __init__(self, fingerprint: Any, old: dict[str, Listing], keep: bool) -> None:
        self.fingerprint = fingerprint
        self.old = old
        self.new: dict[str, Listing] = {}
        self.keep = keep
        self.same = bool(old)
        self.young = time.time_ns() - RACY_NS

    def listing(self, rel_dir: str, mtime_ns: int, rules: int) -> Listing | None:
        found = self.old.get(rel_dir)
        if found is not None and found[0] == mtime_ns and found[1] == rules:
            return found
        self.same = False
        return None

    def remember(self, rel_dir: str, listing: Listing) -> None:
        if not self.keep or listing[0] > self.young:
            self.same = False  # not kept, so the next walk cannot call itself the same
            return
        self.new[rel_dir] = listing


class WalkCache:
    """The cache file of one index folder; ``None`` location: nothing kept (object store)."""

    def __init__(self, location: str | None) -> None:
        self.location = location
        self.data: dict[str, Any] = {"format": FORMAT, "vaults": {}, "clean": None}
        self.vaults: dict[str, VaultCache] = {}
        if location:
            with contextlib.suppress(OSError, ValueError, EOFError, TypeError), no_gc():
                with open(location, "rb") as fh:
                    data = marshal.load(fh)
                if isinstance(data, dict) and data.get("format") == FORMAT:
                    self.data = data

    @classmethod
    def beside(cls, index_dir: str) -> WalkCache:
        return cls(os.path.join(index_dir, CACHE_NAME))

    def vault(self, vault_id: str, fingerprint: Any, keep: bool = True) -> VaultCache:
        saved = self.data["vaults"].get(vault_id)
        old = saved[1] if saved and saved[0] == fingerprint else {}
        self.vaults[vault_id] = VaultCache(fingerprint, old, keep)
        return self.vaults[vault_id]

    @property
    def clean(self) -> Any:
        return self.data.get("clean")

    def save(self, clean: Any = None) -> None:
        """Write this walk's listings (and the build's ``clean`` record) atomically; a
        failure only costs the next walk its speed."""
        if not self.location:
            return
        data = {"format": FORMAT, "clean": clean,
                "vaults": {vid: (c.fingerprint, c.new) for vid, c in self.vaults.items()}}
        tmp = f"{self.location}.{os.getpid()}.tmp"
        with contextlib.suppress(OSError, ValueError):
            with open(tmp, "wb") as fh:
                marshal.dump(data, fh)
            os.replace(tmp, self.location)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
