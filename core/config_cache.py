"""Parsed config files, cached per user so the `vq search` thin client needs no YAML parser.

Importing and running PyYAML is a fifth of a cold `vq search`'s start-up. The
mapping read from a config file is kept as JSON in the private socket folder
(``vq.core.runtime.runtime_dir``, 0700 and checked), keyed by the file's path,
size, inode, mtime and ctime: any edit, replace or touch misses and re-parses.
A file is cached only once its timestamps are ``SETTLED_SECONDS`` old (they
tick in milliseconds: two same-size writes within one tick look alike).
Only data that survives the JSON round trip unchanged is cached (a YAML date or
a non-string key is not). Every failure here is a miss, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

FOLDER = "config-cache"
SETTLED_SECONDS = 2.0  # a file modified more recently is not cached: timestamps are coarse


def stat(path: Path) -> tuple | None:
    """The file's identity for the cache key (None: no cache for this read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.abspath(path), st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _entry(seen: tuple) -> Path | None:
    from vq.core import runtime

    try:
        folder = runtime.runtime_dir() / FOLDER
        folder.mkdir(mode=0o700, exist_ok=True)
    except (OSError, runtime.ServiceDirUnsafe):
        return None
    return folder / f"{runtime.digest(repr(seen))}.json"


def load(path: Path, seen: tuple | None) -> dict[str, Any] | None:
    entry = _entry(seen) if seen else None
    if entry is None or seen is None:
        return None
    try:
        cached = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if cached.get("key") != list(seen) or not isinstance(cached.get("data"), dict):
        return None
    return cached["data"]


def save(path: Path, seen: tuple | None, data: dict[str, Any]) -> None:
    entry = _entry(seen) if seen else None
    if entry is None or seen is None or stat(path) != seen:  # changed while read
        return
    if time.time_ns() - seen[3] < SETTLED_SECONDS * 1e9:  # mtime; ctime is in the key
        return
    try:
        text = json.dumps({"key": list(seen), "data": data})
    except (TypeError, ValueError):
        return
    if json.loads(text)["data"] != data:
        return  # not plain JSON data (int keys, tuples...): parse it every time
    tmp = entry.with_suffix(f".tmp-{os.getpid()}")
    with contextlib.suppress(OSError):
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, entry)
