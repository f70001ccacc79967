"""The walk's answer for a few named paths, without walking the vault: what the
watcher's path builds need.

A watcher event names a path; whether a build would index it is the walk's
classification (``vq.core.walk.Walker.kind``) applied to each part of the path
from the vault root down, with the ``.gitignore`` files on the way, then the
walk's stat. A folder that appeared (a rename, a checkout) is walked as the
walk would walk it. One classification for both, so a watched vault and a
swept one agree on which files exist.

What the manifest must be compared with is returned too (``Scope``): every
named path, and everything beneath a path that is now a folder or is gone (a
deleted or renamed folder takes its files with it, and no event names them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from vq.core.settings import Settings, Vault
from vq.core.walk import (
    Discovery,
    FileEntry,
    Ignore,
    SizeCap,
    Walker,
    admit,
    own_paths,
    read_gitignore,
)

OUTSIDE = "outside the vault"


@dataclass
class Scope:
    """The manifest rows a path build compares: exact keys, and keys beneath prefixes."""

    exact: set[tuple[str, str]] = field(default_factory=set)
    prefixes: set[tuple[str, str]] = field(default_factory=set)  # (vault, "folder/")

    def covers(self, vault: str, path: str) -> bool:
        return (vault, path) in self.exact or any(
            v == vault and path.startswith(p) for v, p in self.prefixes)


def classify_path(walker: Walker, rel: str) -> tuple[str, tuple[Ignore, ...]]:
    """"file" or "dir" when the walk would stat or descend into ``rel`` (posix, relative
    to the vault root), else why not: a skipped reason, "vq's own files" or
    ``OUTSIDE``; with the ``.gitignore`` rules of its parents. A path that no longer
    exists is classified by its name as a file."""
    parts = rel.split("/")
    ignores: tuple[Ignore, ...] = ()
    if not rel or ".." in parts or "" in parts:
        return OUTSIDE, ignores
    folder = walker.top
    for depth, name in enumerate(parts):
        if walker.vault.gitignore:
            ignores = ignores + read_gitignore(folder, "/".join(parts[:depth]))
        location = folder + os.sep + name
        if location in walker.inside:
            return "vq's own files", ignores
        last = depth == len(parts) - 1
        is_dir = not last or (os.path.isdir(location) and not os.path.islink(location))
        kind = walker.kind(name, "/".join(parts[:depth + 1]), is_dir, ignores)
        if last or kind != "dir":
            return kind, ignores
        folder = location
    return OUTSIDE, ignores


def stat_paths(vault: Vault, rels: Iterable[str], cap: SizeCap, out: Discovery,
               scope: Scope, hooked: frozenset[str] = frozenset(),
               own: frozenset[str] = frozenset()) -> None:
    """Add to ``out`` what a walk would find at these paths, and to ``scope`` what the
    manifest is compared against. A vault whose root is gone is reported in
    ``missing_roots`` and left out of ``walked_vaults``, so nothing of it is pruned."""
    if not vault.path.is_dir():
        out.missing_roots.append(vault.id)
        return
    out.walked_vaults.append(vault.id)
    walker = Walker(vault, out, hooked, own)
    for rel in sorted(set(rels)):
        kind, ignores = classify_path(walker, rel)
        if kind == OUTSIDE:
            continue
        scope.exact.add((vault.id, rel))
        location = walker.top + os.sep + rel.replace("/", os.sep)
        if kind == "dir":
            scope.prefixes.add((vault.id, rel + "/"))
            found = list(walker.walk(None, rel, ignores))
        elif not os.path.lexists(location):
            scope.prefixes.add((vault.id, rel + "/"))  # a deleted folder, or a file
            found = []
        elif kind == "file":
            entry = walker.stat(location, rel, os.path.islink(location))
            found = [] if entry is None else [entry]
        else:
            out.skipped[kind] += 1
            found = []
        for entry in found:
            if _links_to_walked(walker, entry):
                out.skipped["symlink to an indexed file"] += 1
            else:
                admit(entry, cap, hooked, out)


def _links_to_walked(walker: Walker, entry: FileEntry) -> bool:
    """A link whose target the walk indexes on its own: skipped, as the whole walk skips
    it (``Walker.once_each``), so a watched vault and a swept one agree."""
    if entry.location == walker.top + os.sep + entry.path.replace("/", os.sep):
        return False
    target = os.path.relpath(entry.location, walker.top).replace(os.sep, "/")
    return classify_path(walker, target)[0] == "file"


def discover_paths(settings: Settings, changed: Mapping[str, Iterable[str]]
                   ) -> tuple[Discovery, Scope]:
    """``changed``: vault id -> paths relative to its root. Vaults not configured are
    ignored (their rows go at the next full build)."""
    out, scope = Discovery(), Scope()
    hooked, own = frozenset(settings.hooks), own_paths(settings)
    for vault in settings.vaults:
        if vault.id in changed:
            stat_paths(vault, changed[vault.id], SizeCap.of(settings), out, scope,
                       hooked, own)
    return out, scope
