"""Walk vault roots and stat every file vq could index, without reading any.

The one walker: `vq build`, `vq status --check`, MCP ``status`` and `vq doctor` all
call ``discover_for``, so they agree on which files exist. It lives below both
sides because it needs only the file-type table (``vq.core.filetypes``), never a
chunker. vq's own files (the index folder with its extract cache, the build lock
and its holder file, the warm service's socket) are never walked, wherever they
are: an index inside a vault must not index itself.

What is skipped and why is counted, never silent: dot entries, globs,
``.gitignore``, unclaimed extensions, vendored folders (``vendor/`` too in code
vaults, where it means third-party sources), symlinks that leave the vault.
Extensions with a configured preprocessing hook are claimed like handled ones.
Problems a user should fix (broken symlinks, unreadable folders, oversized
files) are returned with the path and the reason.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from vq.core import paths, runtime
from vq.core.display import fs_name, is_utf8_name
from vq.core.errors import VqError
from vq.core.filetypes import handler_name, suffix
from vq.core.lock import holder_file
from vq.core.settings import Settings, Vault

__all__ = ["Discovery", "FileEntry", "Problem", "discover", "discover_for", "own_paths",
           "suffix"]

VENDORED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "bower_components"})
CODE_VENDORED_DIRS = frozenset({"vendor", "third_party"})
GENERATED_SUFFIXES = (".min.js", ".min.css", ".map", ".lock")
NOT_UTF8_NAME = ("file name is not valid UTF-8 (shown with its bytes escaped as \\xNN); "
                 "rename it to UTF-8 (e.g. `convmv -f latin1 -t utf8`) to index it")


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file a build may index. ``location`` (where it is on disk) stays the string
    the walk got: building a ``Path`` per file was a third of a no-op rebuild's walk."""

    vault: str
    path: str             # posix, relative to the vault root
    location: str | Path
    size: int
    mtime_ns: int
    root: str = ""        # the vault's real root, which every read stays beneath

    @property
    def abs_path(self) -> Path:
        return Path(self.location)


@dataclass(frozen=True)
class Problem:
    """A file (or folder) the walk reports; ``path`` is always valid UTF-8 (a name the
    OS gave with non-UTF-8 bytes is kept with them escaped, so tables can store it)."""

    vault: str
    path: str
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", fs_name(self.path))


@dataclass
class Discovery:
    files: list[FileEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    missing_roots: list[str] = field(default_factory=list)
    walked_vaults: list[str] = field(default_factory=list)
    # folders not descended into: (vault, relative path, "vendored" | "excluded"); `vq init`
    # names them when it proposes excludes
    pruned: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Ignore:
    """One ``.gitignore``'s rules, anchored where it lives (also used by `vq init`'s scan)."""

    base: str          # relative dir of the .gitignore ("" for the root)
    spec: pathspec.PathSpec

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.base and not rel.startswith(self.base + "/"):
            return False
        sub = rel[len(self.base) + 1:] if self.base else rel
        return self.spec.match_file(sub + "/" if is_dir else sub)


def _spec(lines: list[str] | tuple[str, ...]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def discover_for(settings: Settings, vaults: tuple[Vault, ...] | list[Vault] | None = None
                 ) -> Discovery:
    """The walk exactly as a build does it (size cap, hooked extensions), so status
    --check, doctor and the build agree on which files exist."""
    chosen = settings.vaults if vaults is None else vaults
    return discover(chosen, settings.max_file_bytes, frozenset(settings.hooks),
                    own_paths(settings))


def own_paths(settings: Settings) -> frozenset[str]:
    """Real paths of what vq itself writes on local disk, never to be indexed."""
    out = {str(settings.build_lock), str(holder_file(settings.build_lock))}
    if not paths.is_uri(settings.index_dir):
        out.add(settings.index_dir)  # the extract cache and lock default live inside it
        # the socket's name, without creating (or trusting) its folder: a walk needs neither
        with contextlib.suppress(OSError, VqError):
            out.add(str(runtime.service_socket(settings.index_dir, create=False)))
    return frozenset(os.path.realpath(p) for p in out)


def discover(vaults: tuple[Vault, ...] | list[Vault], max_file_bytes: int,
             hooked: frozenset[str] = frozenset(),
             own: frozenset[str] = frozenset()) -> Discovery:
    """Stat-walk every vault; a missing root is reported in ``missing_roots``.

    ``hooked``: extensions (``".docx"``) a preprocessing hook reads, so claimed.
    ``own``: real paths never walked (``own_paths``), counted as "vq's own files".
    """
    out = Discovery()
    for vault in vaults:
        root = vault.path
        if not root.is_dir():
            out.missing_roots.append(vault.id)
            continue
        out.walked_vaults.append(vault.id)
        for entry in _walk_vault(vault, out, hooked, own):
            if not is_utf8_name(entry.path):  # no table, JSON or SQL filter can hold it
                out.problems.append(Problem(vault.id, entry.path, NOT_UTF8_NAME))
                continue
            if entry.size > max_file_bytes:
                out.problems.append(Problem(vault.id, entry.path,
                                            f"too large ({entry.size} bytes > max_file_bytes "
                                            f"{max_file_bytes}); raise max_file_bytes to index it"))
                continue
            out.files.append(entry)
    return out


def _walk_vault(vault: Vault, out: Discovery, hooked: frozenset[str],
                own: frozenset[str] = frozenset()) -> Iterator[FileEntry]:
    root = vault.path.resolve()
    inside = frozenset(p for p in own if p.startswith(str(root).rstrip(os.sep) + os.sep))
    include = _spec(vault.include) if vault.include else None
    exclude = _spec(vault.exclude) if vault.exclude else None
    stack: list[tuple[Path, str, tuple[Ignore, ...]]] = [(root, "", ())]
    while stack:
        folder, rel_dir, ignores = stack.pop()
        if vault.gitignore:
            ignores = ignores + read_gitignore(folder, rel_dir)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            out.problems.append(Problem(vault.id, rel_dir or ".",
                                        f"cannot list folder: {exc.strerror}"))
            continue
        for entry in entries:
            if inside and entry.path in inside:
                out.skipped["vq's own files"] += 1
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            found = _visit(entry, rel, root, vault, include, exclude, ignores, out, hooked)
            if isinstance(found, FileEntry):
                yield found
            elif found == "dir":
                stack.append((Path(entry.path), rel, ignores))


def _visit(entry: os.DirEntry, rel: str, root: Path, vault: Vault,
           include: pathspec.PathSpec | None, exclude: pathspec.PathSpec | None,
           ignores: tuple[Ignore, ...], out: Discovery,
           hooked: frozenset[str] = frozenset()) -> FileEntry | str | None:
    """Classify one directory entry: a FileEntry, "dir" to descend, or None (counted)."""
    if entry.name.startswith("."):
        out.skipped["hidden"] += 1
        return None
    is_link = entry.is_symlink()
    try:
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        is_dir = False
    if is_dir:
        if entry.name in VENDORED_DIRS or (vault.kind == "code"
                                           and entry.name in CODE_VENDORED_DIRS):
            out.skipped["vendored"] += 1
            out.pruned.append((vault.id, rel, "vendored"))
            return None
        if ignored(rel, True, exclude, ignores):
            out.skipped["excluded"] += 1
            out.pruned.append((vault.id, rel, "excluded"))
            return None
        return "dir"
    if ignored(rel, False, exclude, ignores):
        out.skipped["excluded"] += 1
        return None
    if include is not None and not include.match_file(rel):
        out.skipped["not included"] += 1
        return None
    if entry.name.endswith(GENERATED_SUFFIXES):
        out.skipped["generated"] += 1
        return None
    if handler_name(entry.name) is None and suffix(entry.name) not in hooked:
        out.skipped["unclaimed"] += 1
        return None
    return _stat_file(entry, rel, root, vault, is_link, out)


def _stat_file(entry: os.DirEntry, rel: str, root: Path, vault: Vault, is_link: bool,
               out: Discovery) -> FileEntry | None:
    """A link inside the vault is recorded at its target, which the reader opens
    beneath the root without following any link (``vq.core.confined``)."""
    location: str | Path = entry.path
    if is_link:
        try:
            target = Path(entry.path).resolve(strict=True)
        except (OSError, RuntimeError):
            out.problems.append(Problem(vault.id, rel, "broken symlink (or a symlink loop); "
                                        "remove it or fix its target"))
            return None
        if not target.is_relative_to(root):
            out.skipped["symlink outside vault"] += 1
            return None
        if target.is_dir():
            out.skipped["symlinked folder"] += 1
            return None
        location = str(target)
    try:
        st = entry.stat(follow_symlinks=True)
    except OSError as exc:
        out.problems.append(Problem(vault.id, rel, f"cannot stat: {exc.strerror}"))
        return None
    if not entry.is_file(follow_symlinks=True):
        out.skipped["special"] += 1
        return None
    return FileEntry(vault.id, rel, location, st.st_size, st.st_mtime_ns, str(root))


def ignored(rel: str, is_dir: bool, exclude: pathspec.PathSpec | None,
            ignores: tuple[Ignore, ...]) -> bool:
    """Excluded by the vault's globs or a ``.gitignore`` on the way down."""
    if exclude is not None and exclude.match_file(rel + "/" if is_dir else rel):
        return True
    return any(i.matches(rel, is_dir) for i in ignores)


def read_gitignore(folder: Path, rel_dir: str) -> tuple[Ignore, ...]:
    try:
        lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ()
    return (Ignore(rel_dir, _spec(lines)),)
