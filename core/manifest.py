"""The manifest and the one ``reconcile()``: what the next build would read, record or drop.

`vq build` acts on the plan; `vq status --check`, MCP ``status`` and `vq doctor`
report it. All four call this function on the same walk (``vq.core.walk``), so
they cannot disagree: "stale" means exactly "the next build would change
something".

Cheap first, exact second: equal size and mtime_ns (and a recorded hash)
means unchanged without reading the file; anything else is read and hashed by
the build, which then decides between a re-stamp and a re-chunk. A blank hash
without an error is a file a killed build was rewriting (``mark_pending``): it
is re-read even when its size and mtime match again, so the kill-then-restore
case is repaired, not trusted. A file that a different built-in reader would
read now than the one that indexed it (a vq upgrade gave ``.rst`` its own
chunker) is re-read and re-chunked once, so an upgrade needs no ``--rebuild``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vq.core.filetypes import handler_name, reader_tag
from vq.core.settings import Settings
from vq.core.store import Index, path_filter, sql_str
from vq.core.walk import Discovery, FileEntry, Problem, discover_for
from vq.core.walk_paths import Scope

Key = tuple[str, str]

NEW, CHANGED, UNFINISHED, NEW_READER, DELETED, VAULT_REMOVED = (
    "new", "changed", "unfinished", "new reader", "deleted", "vault removed")


@dataclass(frozen=True)
class ManifestRow:
    size: int
    mtime_ns: int
    hash: str
    chunks: int
    error: str | None
    handler: str = ""  # the reader that indexed it ("markdown", "hook:pandoc"); "" unknown

    def read_by_another(self, path: str) -> bool:
        """A built-in reader other than the one that indexed the file (or a later revision
        of it, ``READER_REVISIONS``) would read it now. Hooks are left out (the config
        names them; a hooked file's reader is its hook)."""
        if not self.handler or self.handler.startswith("hook:"):
            return False
        now = handler_name(path)
        return now is not None and reader_tag(now) != self.handler


@dataclass(frozen=True)
class StaleFile:
    vault: str
    path: str          # "" for a whole vault
    reason: str        # new | changed | unfinished | new reader | deleted | vault removed


@dataclass
class Plan:
    """What a build does next. ``stale`` is the same plan in words, for the reports."""

    unchanged: int = 0
    to_read: list[FileEntry] = field(default_factory=list)
    retry: int = 0                 # of to_read: unchanged files whose last read failed
    problems: list[Problem] = field(default_factory=list)  # new or changed problem rows
    deleted: list[Key] = field(default_factory=list)
    pruned_vaults: list[str] = field(default_factory=list)
    stale: list[StaleFile] = field(default_factory=list)

    def count(self, reason: str) -> int:
        return sum(1 for s in self.stale if s.reason == reason)


DUPLICATE = ManifestRow(-1, -1, "", 0, None)


MANIFEST_COLUMNS = ["vault", "path", "size", "mtime_ns", "hash", "chunks", "error", "handler"]
SCOPED_READ_MAX = 2000  # past this many keys one full read beats many filtered ones


def read_manifest(index: Index, scope: Scope | None = None) -> dict[Key, ManifestRow]:
    """One row per file; a file listed twice (two builders raced) reads as DUPLICATE,
    which is stale to everyone, and the build rewrites its rows from scratch.
    ``scope``: only the rows a path build compares (``vq.core.walk_paths``)."""
    if scope is None or len(scope.exact) + len(scope.prefixes) > SCOPED_READ_MAX:
        out = _rows(index, None)
        return out if scope is None else {k: r for k, r in out.items() if scope.covers(*k)}
    out = {}
    for where in scoped_filters(scope):
        out.update(_rows(index, where))
    return out


def scoped_filters(scope: Scope) -> list[str]:
    prefixes = [f"(vault = {sql_str(v)} AND starts_with(path, {sql_str(p)}))"
                for v, p in sorted(scope.prefixes)]
    return path_filter(scope.exact) + [" OR ".join(prefixes[i:i + 100])
                                       for i in range(0, len(prefixes), 100)]


def _rows(index: Index, where: str | None) -> dict[Key, ManifestRow]:
    query = index.files.search()
    if where:
        query = query.where(where)
    data = query.select(MANIFEST_COLUMNS).limit(None).to_arrow().to_pydict()
    out: dict[Key, ManifestRow] = {}
    for v, p, s, m, h, c, e, r in zip(*(data[c] for c in MANIFEST_COLUMNS), strict=True):
        out[(v, p)] = DUPLICATE if (v, p) in out else ManifestRow(s, m, h, c, e, r or "")
    return out


def file_state(old: ManifestRow | None, entry: FileEntry) -> str:
    """Why a walked file must be read: a stale reason, "retry" (it failed last time and
    is as it was: read again, not stale), or "" (unchanged)."""
    if old is None:
        return NEW
    if (old.size, old.mtime_ns) != (entry.size, entry.mtime_ns):
        return CHANGED
    if old.error:
        return "retry"
    if not old.hash:
        return UNFINISHED
    return NEW_READER if old.read_by_another(entry.path) else ""


def reconcile(manifest: dict[Key, ManifestRow], found: Discovery, configured: set[str]
              ) -> Plan:
    """``configured``: every vault id in config (a vault outside it is pruned)."""
    plan = Plan()
    seen: set[Key] = set()
    for entry in found.files:
        key = (entry.vault, entry.path)
        seen.add(key)
        state = file_state(manifest.get(key), entry)
        if not state:
            plan.unchanged += 1
            continue
        plan.to_read.append(entry)
        if state == "retry":
            plan.retry += 1
        else:
            plan.stale.append(StaleFile(*key, state))
    for problem in found.problems:  # too large, broken symlink: recorded with the reason
        key = (problem.vault, problem.path)
        seen.add(key)
        old = manifest.get(key)
        if old is None or old.error != problem.reason:
            plan.problems.append(problem)
            plan.stale.append(StaleFile(*key, NEW if old is None else CHANGED))
    _gone(plan, manifest, seen, set(found.walked_vaults), configured)
    return plan


def _gone(plan: Plan, manifest: dict[Key, ManifestRow], seen: set[Key], walked: set[str],
          configured: set[str]) -> None:
    """Files no longer on disk in a walked vault, and vaults no longer configured. A vault
    whose root is missing was not walked: its rows stay (an unmounted disk)."""
    plan.pruned_vaults = sorted({v for v, _ in manifest} - configured)
    plan.stale += [StaleFile(vault, "", VAULT_REMOVED) for vault in plan.pruned_vaults]
    plan.deleted = sorted(key for key in manifest if key[0] in walked and key not in seen)
    plan.stale += [StaleFile(*key, DELETED) for key in plan.deleted]


def plan_for(settings: Settings, index: Index
             ) -> tuple[Plan, Discovery, dict[Key, ManifestRow]]:
    """The walk, the manifest and their reconcile, exactly as the next build does them."""
    manifest = read_manifest(index)
    found = discover_for(settings)
    return reconcile(manifest, found, {v.id for v in settings.vaults}), found, manifest
