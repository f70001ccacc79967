"""Walk vault roots and stat every file vq could index, without reading any.

The one walker: `vq build`, `vq status --check`, MCP ``status`` and `vq doctor` all
call ``discover_for``, so they agree on which files exist. It lives below both
sides because it needs only the file-type table (``vq.core.filetypes``), never a
chunker. vq's own files (the index folder with its extract cache, the build lock
and its holder file, the warm service's socket) are never walked, wherever they
are: an index inside a vault must not index itself.

What is skipped and why is counted, never silent: dot entries, globs,
``.gitignore``, unclaimed extensions, vendored folders (``vendor/`` too in code
vaults, where it means third-party sources), symlinks that leave the vault, and
symlinks to a file the vault indexes anyway (the same text twice in every result).
Extensions with a configured preprocessing hook are claimed like handled ones.
Problems a user should fix (broken symlinks, unreadable folders, oversized
files) are returned with the path and the reason.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pathspec

from vq.core import paths, runtime
from vq.core.display import fs_name, is_utf8_name
from vq.core.errors import VqError
from vq.core.filetypes import BINARY_HANDLERS, HANDLED_EXTENSIONS, handler_name, suffix
from vq.core.lock import holder_file
from vq.core.mounts import network_fs
from vq.core.settings import Settings, Vault
from vq.core.test_paths import VENDORED_DIRS as CODE_VENDORED_DIRS
from vq.core.walk_cache import Listing, VaultCache, WalkCache, no_gc, rules_key

__all__ = ["Discovery", "FileEntry", "Problem", "SizeCap", "UNCAPPED", "Walker", "discover",
           "discover_for", "own_paths", "suffix"]

VENDORED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "bower_components"})
# CODE_VENDORED_DIRS (vendor/, third_party/, _vendor/...: vq.core.test_paths) are skipped in
# code vaults only
GENERATED_SUFFIXES = (".min.js", ".min.css", ".map", ".lock")
# Lock files a package manager writes, under names no suffix gives away: commander.js's
# package-lock.json was 221 of its 2,424 chunks, hashes and version pins that matched
# any query naming a dependency.
GENERATED_NAMES = frozenset({"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml",
                             "yarn.lock", "go.sum", "composer.lock"})
NOT_UTF8_NAME = ("file name is not valid UTF-8 (shown with its bytes escaped as \\xNN); "
                 "rename it to UTF-8 (e.g. `convmv -f latin1 -t utf8`) to index it")


@dataclass(frozen=True)
class SizeCap:
    """How big a file may be before it is an error instead of read: ``max_file_bytes``
    for text, ``max_document_bytes`` for documents (PDF, HTML, notebooks, and what a hook
    converts). Why two: a document's bytes are mostly images, fonts and cell outputs, and
    the text kept from it is bounded again (``extract_max_chars``, ``hook_max_bytes``);
    one 5 MB cap refused ordinary manuals and notebooks of plots whose text is small."""

    text: int
    document: int

    @classmethod
    def of(cls, settings: Settings) -> SizeCap:
        return cls(settings.max_file_bytes, settings.max_document_bytes)

    def bound(self, relpath: str, hooked: frozenset[str]) -> tuple[int, str]:
        """(the cap, the setting that sets it) for one file; a hook claims its
        extension before any reader does, as the build's chunker does."""
        if suffix(relpath) in hooked or handler_name(relpath) in BINARY_HANDLERS:
            return self.document, "max_document_bytes"
        return self.text, "max_file_bytes"


UNCAPPED = SizeCap(sys.maxsize, sys.maxsize)  # `vq init`'s scans: sizes are counted there


class FileEntry(NamedTuple):
    """One file a build may index. ``location`` (where it is on disk) stays the string
    the walk got: building a ``Path`` per file was a third of a no-op rebuild's walk,
    and a tuple is cheaper to build than a frozen dataclass (one per file per sweep)."""

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
    # every vault walked found exactly what the cached walk found (``vq.core.walk_cache``)
    same_as_cache: bool = False


@dataclass(frozen=True)
class Ignore:
    """One ``.gitignore``'s rules, anchored where it lives (also used by `vq init`'s scan)."""

    base: str          # relative dir of the .gitignore ("" for the root)
    spec: pathspec.PathSpec
    key: int = 0       # of its text: the walk cache keys listings on the rules in force

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.base and not rel.startswith(self.base + "/"):
            return False
        sub = rel[len(self.base) + 1:] if self.base else rel
        return self.spec.match_file(sub + "/" if is_dir else sub)


def _spec(lines: list[str] | tuple[str, ...]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def discover_for(settings: Settings, vaults: tuple[Vault, ...] | list[Vault] | None = None,
                 cache: WalkCache | None = None) -> Discovery:
    """The walk exactly as a build does it (size cap, hooked extensions), so status
    --check, doctor and the build agree on which files exist. It reads the index's walk
    cache (``vq.core.walk_cache``); only a build, passing its own ``cache``, saves it."""
    chosen = settings.vaults if vaults is None else vaults
    if cache is None:
        cache = walk_cache_for(settings)
    return discover(chosen, SizeCap.of(settings), frozenset(settings.hooks),
                    own_paths(settings), cache)


def walk_cache_for(settings: Settings) -> WalkCache:
    """The index's walk cache; none for an index in object storage."""
    if paths.is_uri(settings.index_dir):
        return WalkCache(None)
    return WalkCache.beside(settings.index_dir)


def own_paths(settings: Settings) -> frozenset[str]:
    """Real paths of what vq itself writes on local disk, never to be indexed."""
    out = {str(settings.build_lock), str(holder_file(settings.build_lock))}
    if not paths.is_uri(settings.index_dir):
        out.add(settings.index_dir)  # the extract cache and lock default live inside it
        # the socket's name, without creating (or trusting) its folder: a walk needs neither
        with contextlib.suppress(OSError, VqError):
            out.add(str(runtime.service_socket(create=False)))
    return frozenset(os.path.realpath(p) for p in out)


def discover(vaults: tuple[Vault, ...] | list[Vault], cap: SizeCap,
             hooked: frozenset[str] = frozenset(),
             own: frozenset[str] = frozenset(), cache: WalkCache | None = None) -> Discovery:
    """Stat-walk every vault; a missing root is reported in ``missing_roots``.

    ``hooked``: extensions (``".docx"``) a preprocessing hook reads, so claimed.
    ``own``: real paths never walked (``own_paths``), counted as "vq's own files".
    ``cache``: folder listings to reuse and refresh (``vq.core.walk_cache``).
    """
    with no_gc():
        return _discover(vaults, cap, hooked, own, cache)


def planted_root(vault: Vault, out: Discovery) -> bool:
    """True (and a problem reported) when the vault root is a symlink another user owns:
    whoever can write the folder above a shared vault could point it at your home, and
    the walk would index what it leads to. Its rows stay, as for a missing root."""
    try:
        st = os.lstat(vault.path)
    except OSError:
        return False
    if not stat.S_ISLNK(st.st_mode) or st.st_uid in (os.geteuid(), 0):
        return False
    out.problems.append(Problem(vault.id, ".", f"the vault root {vault.path} is a symlink "
                                f"owned by another user (uid {st.st_uid}); not followed: "
                                "point the vault at the real folder, or remove the link"))
    return True


def _discover(vaults: tuple[Vault, ...] | list[Vault], cap: SizeCap,
              hooked: frozenset[str], own: frozenset[str], cache: WalkCache | None
              ) -> Discovery:
    out = Discovery()
    same = cache is not None and bool(vaults)
    for vault in vaults:
        root = vault.path
        if not root.is_dir() or planted_root(vault, out):
            out.missing_roots.append(vault.id)
            same = False
            continue
        out.walked_vaults.append(vault.id)
        walker = Walker(vault, out, hooked, own)
        folders = None
        if cache is not None:
            folders = cache.vault(vault.id, walker.fingerprint(cap),
                                  keep=network_fs(walker.top) is None)
        for entry in walker.once_each(walker.walk(folders)):
            admit(entry, cap, hooked, out)
        same = same and folders is not None and folders.same
    out.same_as_cache = same
    return out


def admit(entry: FileEntry, cap: SizeCap, hooked: frozenset[str], out: Discovery) -> None:
    """A file the walk found: indexed, or a problem when its name or size rules it out."""
    if not is_utf8_name(entry.path):  # no table, JSON or SQL filter can hold it
        out.problems.append(Problem(entry.vault, entry.path, NOT_UTF8_NAME))
        return
    if entry.size <= min(cap.text, cap.document):  # most files: no reader to look up
        out.files.append(entry)
        return
    limit, setting = cap.bound(entry.path, hooked)
    if entry.size > limit:
        out.problems.append(Problem(entry.vault, entry.path,
                                    f"too large ({entry.size} bytes > {setting} {limit}); "
                                    f"raise {setting} to index it"))
    else:
        out.files.append(entry)


class Walker:
    """One vault's walk: list (or recall) each folder's classified names, stat the files."""

    def __init__(self, vault: Vault, out: Discovery, hooked: frozenset[str],
                 own: frozenset[str]) -> None:
        self.vault, self.out, self.hooked = vault, out, hooked
        root = vault.path.resolve()
        self.root, self.top = root, str(root).rstrip(os.sep) or os.sep
        self.inside = frozenset(p for p in own if p.startswith(self.top + os.sep))
        self.links: list[FileEntry] = []  # entries the walk reached through a symlink
        self.include = _spec(vault.include) if vault.include else None
        self.exclude = exclude_spec(vault)

    def fingerprint(self, cap: SizeCap) -> str:
        """Everything a listing's classification (or a file's problem) depends on."""
        v = self.vault
        return repr((self.top, v.include, v.exclude, v.kind, v.gitignore, sorted(self.hooked),
                     sorted(self.inside), cap, sorted(HANDLED_EXTENSIONS),
                     sorted(VENDORED_DIRS | CODE_VENDORED_DIRS), GENERATED_SUFFIXES,
                     sorted(GENERATED_NAMES)))

    def once_each(self, entries: Iterator[FileEntry]) -> list[FileEntry]:
        """``entries`` less the links to a file the vault indexes anyway (or that an
        earlier link already brought in): zod's ``CLAUDE.md -> AGENTS.md`` was the same
        text twice in every result list. Skipped and counted; a link whose target is not
        walked (in a dot folder, excluded) is still indexed at its target."""
        found = list(entries)
        if not self.links:  # the usual case: one check, nothing built per file
            return found
        links = {id(e) for e in self.links}
        base = self.top + os.sep
        seen = {base + e.path.replace("/", os.sep) for e in found if id(e) not in links}
        out = []
        for entry in found:
            if id(entry) in links:
                if entry.location in seen:
                    self.out.skipped["symlink to an indexed file"] += 1
                    continue
                seen.add(str(entry.location))
            out.append(entry)
        return out

    def walk(self, cache: VaultCache | None, rel_dir: str = "",
             ignores: tuple[Ignore, ...] = ()) -> Iterator[FileEntry]:
        """Every indexable file under ``rel_dir`` (the root by default), whose parents'
        ``.gitignore`` rules are ``ignores``."""
        top = self.top + os.sep + rel_dir.replace("/", os.sep) if rel_dir else self.top
        stack: list[tuple[str, str, tuple[Ignore, ...]]] = [(top, rel_dir, ignores)]
        while stack:
            folder, rel_dir, ignores = stack.pop()
            if self.vault.gitignore:
                ignores = ignores + read_gitignore(folder, rel_dir)
            listing = self._listing(folder, rel_dir, ignores, cache)
            if listing is None:
                continue
            _, _, names, links, dirs, skipped, pruned, before = listing
            for reason, count in skipped:
                self.out.skipped[reason] += count
            self.out.pruned += [(self.vault.id, rel, why) for rel, why in pruned]
            prefix = f"{rel_dir}/" if rel_dir else ""
            stats = array("q")  # (size, mtime_ns) per name; (-1, -1): not indexable
            fd = _open_dir(folder) if names else None
            try:
                for name in names:
                    is_link = name in links
                    entry = self.stat(folder + os.sep + name, prefix + name, is_link, fd, name)
                    if is_link and entry is not None:
                        self.links.append(entry)
                    stats.extend((-1, -1) if entry is None else (entry.size, entry.mtime_ns))
                    if entry is not None:
                        yield entry
            finally:
                if fd is not None:
                    os.close(fd)
            if cache is not None:
                blob = stats.tobytes()
                if blob != before or -1 in stats:
                    cache.same = False
                cache.remember(rel_dir, (*listing[:7], blob))
            stack.extend((folder + os.sep + d, prefix + d, ignores) for d in dirs)

    def _listing(self, folder: str, rel_dir: str, ignores: tuple[Ignore, ...],
                 cache: VaultCache | None) -> Listing | None:
        """The folder's classified names: recalled while its mtime and rules hold."""
        try:
            mtime = os.stat(folder).st_mtime_ns if cache is not None else 0
            rules = rules_key(tuple(f"{i.base}:{i.key}" for i in ignores))
            if cache is not None and (hit := cache.listing(rel_dir, mtime, rules)):
                return hit
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.out.problems.append(Problem(self.vault.id, rel_dir or ".",
                                             f"cannot list folder: {exc.strerror}"))
            if cache is not None:
                cache.same = False
            return None
        names: list[str] = []
        links: list[str] = []
        dirs: list[str] = []
        pruned: list[tuple[str, str]] = []
        skipped: Counter[str] = Counter()
        for entry in entries:
            if self.inside and entry.path in self.inside:
                skipped["vq's own files"] += 1
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            kind = self._classify(entry, rel, ignores)
            if kind in ("file", "link"):
                names.append(entry.name)
                if kind == "link":
                    links.append(entry.name)
            elif kind == "dir":
                dirs.append(entry.name)
            else:
                skipped[kind] += 1
                if kind in ("vendored", "excluded") and entry.is_dir(follow_symlinks=False):
                    pruned.append((rel, kind))
        return (mtime, rules, tuple(names), tuple(links), tuple(dirs),
                tuple(sorted(skipped.items())), tuple(pruned), b"")

    def _classify(self, entry: os.DirEntry, rel: str, ignores: tuple[Ignore, ...]) -> str:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        kind = self.kind(entry.name, rel, is_dir, ignores)
        return "link" if kind == "file" and entry.is_symlink() else kind

    def kind(self, name: str, rel: str, is_dir: bool, ignores: tuple[Ignore, ...]) -> str:
        """The one classification, by name and place: "file" (a candidate), "dir" to
        descend, or the reason it is skipped (counted)."""
        if name.startswith("."):
            return "hidden"
        if is_dir:
            if name in VENDORED_DIRS or (self.vault.kind == "code"
                                         and name.lower() in CODE_VENDORED_DIRS):
                return "vendored"
            return "excluded" if ignored(rel, True, self.exclude, ignores) else "dir"
        if ignored(rel, False, self.exclude, ignores):
            return "excluded"
        if self.include is not None and not self.include.match_file(rel):
            return "not included"
        if name.endswith(GENERATED_SUFFIXES) or name in GENERATED_NAMES:
            return "generated"
        if handler_name(name) is None and suffix(name) not in self.hooked:
            return "unclaimed"
        return "file"

    def stat(self, location: str, rel: str, is_link: bool, dir_fd: int | None = None,
             name: str = "") -> FileEntry | None:
        """A link inside the vault is recorded at its target, which the reader opens
        beneath the root without following any link (``vq.core.confined``). ``dir_fd``
        and ``name``: stat relative to the open folder (no path lookup per file)."""
        vault, out = self.vault, self.out
        where = location
        if is_link:
            try:
                target = Path(location).resolve(strict=True)
            except (OSError, RuntimeError):
                out.problems.append(Problem(vault.id, rel, "broken symlink (or a symlink "
                                            "loop); remove it or fix its target"))
                return None
            if not target.is_relative_to(self.root):
                out.skipped["symlink outside vault"] += 1
                return None
            if target.is_dir():
                out.skipped["symlinked folder"] += 1
                return None
            where = str(target)
        try:
            st = os.stat(name, dir_fd=dir_fd) if dir_fd is not None and not is_link \
                else os.stat(location)
        except OSError as exc:
            out.problems.append(Problem(vault.id, rel, f"cannot stat: {exc.strerror}"))
            return None
        if not stat.S_ISREG(st.st_mode):
            out.skipped["special"] += 1
            return None
        return FileEntry(vault.id, rel, where, st.st_size, st.st_mtime_ns, self.top)


def _open_dir(folder: str) -> int | None:
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except (OSError, AttributeError):  # no O_DIRECTORY (Windows): stat by path
        return None


def exclude_spec(vault: Vault) -> pathspec.PathSpec | None:
    """A vault's ``exclude`` globs, compiled (gitignore style: ``/en/`` holds every path
    beneath it); None when it has none."""
    return _spec(vault.exclude) if vault.exclude else None


def ignored(rel: str, is_dir: bool, exclude: pathspec.PathSpec | None,
            ignores: tuple[Ignore, ...]) -> bool:
    """Excluded by the vault's globs or a ``.gitignore`` on the way down."""
    if exclude is not None and exclude.match_file(rel + "/" if is_dir else rel):
        return True
    return any(i.matches(rel, is_dir) for i in ignores)


def read_gitignore(folder: str | Path, rel_dir: str) -> tuple[Ignore, ...]:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8",
                  errors="replace") as fh:
            text = fh.read()
    except OSError:
        return ()
    return (Ignore(rel_dir, _spec(text.splitlines()), rules_key((text,))),)
