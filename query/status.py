"""What the index holds and how fresh it is, read without loading a model or torch.

The last build comes from the builds log (``vq.core.builds.last_build``, re-exported
here for the read side's callers)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from vq.core import store
from vq.core.build_progress import read_record
from vq.core.builds import finished_at, last_build
from vq.core.lock import lock_state, overdue
from vq.core.settings import Settings
from vq.core.watching import read_state

__all__ = ["Status", "VaultStatus", "last_build", "read_status"]


@dataclass
class VaultStatus:
    id: str
    path: str
    kind: str
    files: int = 0
    chunks: int = 0
    errors: int = 0
    root_exists: bool = True
    configured: bool = True


@dataclass
class Status:
    index_dir: str
    model: str
    dim: int
    schema_version: int
    vaults: list[VaultStatus] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    last_build: dict[str, Any] | None = None
    lock: str | None = None
    lock_warning: str = ""  # held far longer than a build should (``vq.core.lock.overdue``)
    service: dict[str, Any] | None = None
    chunks: int = 0
    embedded: int = 0           # chunks with their vectors; fewer while a build embeds
    progress: dict[str, Any] | None = None  # the running build's record (lock held)
    watch: dict[str, Any] | None = None  # the running watcher's state (``vq.core.watching``)
    stopped_rebuild: int | None = None  # files a stopped rebuild staged (no build running)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def stage_text(staged: int) -> str:
    """A stopped rebuild's stage as `vq status` and `vq doctor` say it
    (``store.staged_files``: -1 when it does not read)."""
    return "a stage that does not read" if staged < 0 else f"{staged:,} files staged"


def read_status(settings: Settings, max_errors: int = 50) -> Status:
    index = store.open_for(settings)
    store.probe(index)  # a deleted data file is an error here, not a healthy status
    meta = index.meta
    out = Status(settings.index_dir, meta.model, meta.dim, meta.schema_version)
    files = index.files.search().select(["vault", "path", "chunks", "error"]).limit(None)
    data = files.to_arrow().to_pydict()
    by_vault: dict[str, VaultStatus] = {
        v.id: VaultStatus(v.id, str(v.path), v.kind, root_exists=v.path.is_dir())
        for v in settings.vaults}
    for vault, path, chunks, error in zip(data["vault"], data["path"], data["chunks"],
                                          data["error"], strict=True):
        vs = by_vault.setdefault(vault, VaultStatus(vault, "", "", configured=False))
        vs.files += 1
        vs.chunks += chunks or 0
        if error:
            vs.errors += 1
            if len(out.errors) < max_errors:
                out.errors.append({"vault": vault, "path": path, "error": error})
    out.vaults = list(by_vault.values())
    out.last_build = last_build(index)
    if out.last_build is not None:  # the log keeps the start; say the finish as well
        out.last_build["finished_at"] = finished_at(out.last_build)
    out.lock = lock_state(settings.build_lock)
    if out.lock:
        usual = out.last_build["seconds"] if out.last_build else None
        out.lock_warning = overdue(settings.build_lock, usual, settings.build_max_seconds)
    if not out.lock:  # a running rebuild's stage is its progress, not a stopped one
        out.stopped_rebuild = store.staged_files(settings.index_dir)
    record = read_record(settings.build_lock)
    out.chunks = out.embedded = index.chunks.count_rows()
    if record is not None:  # only then can rows lack vectors: count them
        out.embedded -= index.chunks.count_rows("vector IS NULL")
        out.progress = record if out.lock else None
    from vq.query.service.client import service_state

    state = service_state(settings)
    out.service = state if state["state"] != "stopped" else None
    watching = read_state(settings.index_dir)
    out.watch = watching.to_json() if watching else None
    return out
