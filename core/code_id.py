"""Which vq code a process runs: one short id over every file of the installed package.

The resident service outlives the CLI that started it. After `pip install -U vq` (or a
`git pull` in an editable checkout) the next `vq search` runs new code while the
service still runs the old: it would answer with the old ranking, ignore options it
does not know (``--files`` counting files) and leave out new fields. The id is what
the two compare: the path, size and mtime of each of the package's files, so any
replaced, edited, added or removed file changes it (an upgrade rewrites them all).
Standard library only, a few milliseconds (a stat per file, no read), as the thin
client needs.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from functools import lru_cache

from vq.core.runtime import digest

# The package's folders (the repository's top-level folders, installed beneath vq).
PACKAGES = ("vq", "vq.core", "vq.indexer", "vq.query", "vq.jobs")
SUFFIXES = (".py", ".html", ".js", ".css")


@lru_cache(maxsize=1)
def code_id() -> str:
    """This process's id: computed once, so it names the code the process loaded."""
    return current()


def current(roots: Iterable[str] | None = None) -> str:
    """The id of the code on disk now (``roots``: folders to read, for tests)."""
    parts: list[str] = []
    for root in sorted(roots if roots is not None else package_roots()):
        for rel, size, mtime in _files(root):
            parts.append(f"{rel}\0{size}\0{mtime}")
    return digest("\n".join(parts), 12)


def package_roots() -> list[str]:
    roots = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        roots += list(spec.submodule_search_locations or []) if spec else []
    return roots


def _files(root: str) -> list[tuple[str, int, int]]:
    """(path below ``root``, size, mtime in ns) of each code file, in order; a folder
    that cannot be read counts as empty (the id still changes if it comes back)."""
    out: list[tuple[str, int, int]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__" and not entry.name.startswith("."):
                    stack.append(entry.path)
            elif entry.name.endswith(SUFFIXES):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((os.path.relpath(entry.path, root), st.st_size, st.st_mtime_ns))
    return sorted(out)
