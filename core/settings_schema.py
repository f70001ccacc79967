"""Every setting, declared once: its type, its default, its bounds and one line of help.

Validation (``vq.core.settings``), the ``VQ_*`` environment overrides, the CLI's
choices, the MCP tool annotations and the generated reference
(docs/configuration.md) are all derived from these dataclasses: a ``Literal``
type is a list of choices, ``setting(min=..., above=..., max=..., between=...)``
are bounds, ``doc`` is the help. Every number must be finite and, unless a bound
says otherwise, not negative.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from vq.core import paths

Kind = Literal["notes", "code", "docs"]
Method = Literal["hybrid", "lexical", "dense"]
Device = Literal["auto", "cuda", "mps", "cpu"]
Engine = Literal["local", "ray"]
Fusion = Literal["convex", "rrf"]
VectorDtype = Literal["float16", "float32"]
KINDS: tuple[str, ...] = get_args(Kind)
METHODS: tuple[str, ...] = get_args(Method)
DEVICES: tuple[str, ...] = get_args(Device)
ENGINES: tuple[str, ...] = get_args(Engine)
FUSIONS: tuple[str, ...] = get_args(Fusion)
DEFAULT_MODEL = "all-MiniLM-L6-v2"
MAX_DOCUMENT_BYTES = 50_000_000  # `vq init` reads PDFs within it before any config exists
MAX_RESULTS = 1_000_000  # LanceDB's limit overflows its integer past ~4e9: a traceback


def setting(default: Any = MISSING, *, doc: str, min: float | None = None,
            above: float | None = None, max: float | None = None,
            between: tuple[float, float] | None = None, fix: str | None = None,
            factory: Any = MISSING, key: bool = True, compare: bool = True) -> Any:
    """A dataclass field carrying what validation and the docs need.

    ``min``: at least; ``above``: strictly more than; ``max``: at most; ``between``:
    an inclusive range (reported as "out of range"); ``fix``: the ``next:`` line for a
    bound that is broken; ``key`` False: state, not a config key."""
    meta = {"doc": doc, "min": min, "above": above, "max": max, "between": between,
            "fix": fix, "key": key}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=meta, compare=compare)
    return field(default=default, metadata=meta, compare=compare)


@dataclass(frozen=True)
class Vault:
    id: str = setting(doc="the vault's id (its key under vaults:)", key=False)
    path: Path = setting(doc="the folder to index; relative to the config file")
    include: tuple[str, ...] = setting((), doc="gitignore-style globs to index (default all)")
    exclude: tuple[str, ...] = setting((), doc="gitignore-style globs to leave out")
    kind: Kind = setting("notes", doc="notes, code or docs: how results are ranked and shown "
                         "(source code is code in any vault, Markdown in a code vault notes)")
    gitignore: bool = setting(True, doc="honour the vault's .gitignore files")


@dataclass(frozen=True)
class ChunkSettings:
    max_chars: int = setting(1500, min=1, doc="longest chunk in characters (the model's "
                             "token window also bounds it)")
    min_chars: int = setting(200, doc="neighbouring chunks shorter than this are merged")


@dataclass(frozen=True)
class SearchSettings:
    limit: int = setting(10, min=1, max=MAX_RESULTS, doc="results shown (-n)")
    method: Method = setting("hybrid", doc="hybrid, lexical or dense (-m)")
    pool: int = setting(100, min=1, max=MAX_RESULTS,
                        doc="candidates each signal contributes before fusion")
    rrf_k: int = setting(60, doc="the k of reciprocal rank fusion (fusion: rrf)")
    rerank_model: str | None = setting(None, doc="a cross-encoder for --rerank")
    rerank_top: int = setting(30, doc="fused hits the cross-encoder reranks")
    recency_half_life_days: float = setting(30.0, above=0, doc="--recency's half-life")
    fusion: Fusion = setting("convex", doc="convex (weighted min-max scores) or rrf; "
                             "docs/decisions.md#convex-fusion")
    lexical_weight: float = setting(0.4, between=(0.0, 1.0), doc="convex: BM25's weight; "
                                    "piece and section vectors share the rest")
    heading_boost: float = setting(0.0, between=(0.0, 100.0), doc="> 0: BM25 over the "
                                   "heading breadcrumb too, with this weight")
    per_file_cap: int = setting(0, between=(0, MAX_RESULTS), doc="> 0: a file's code hits "
                                "past this many rank below other files' (0: off; "
                                "docs/decisions.md#code-hits)")
    autostart: bool = setting(True, doc="a search that finds no service starts `vq serve`")


@dataclass(frozen=True)
class MaintenanceSettings:
    cleanup_grace_minutes: float = setting(10.0, doc="old table versions are kept this long "
                                           "for running readers")
    vector_index_min_rows: int = setting(100_000, doc="chunks from which an ANN index is built "
                                         "(0: never)")


@dataclass(frozen=True)
class ScheduleSettings:
    cron: str = setting("*/5 * * * *", doc="when `vq schedule` builds (crontab syntax)")
    jitter_seconds: int = setting(20, doc="random delay added to each tick")
    misfire_grace_seconds: int = setting(120, min=1, doc="a tick later than this is skipped")
    log_file: str | None = setting(None, doc="also log to this file (rotated)")
    log_max_bytes: int = setting(10_000_000, doc="rotate the log file at this size")
    log_backups: int = setting(3, doc="rotated log files kept")
    stop_timeout_seconds: int = setting(60, doc="how long a stop waits for a running build")


@dataclass(frozen=True)
class RaySettings:
    """Where `engine: ray` sends the chunk + encode work (docs/ray.md)."""

    address: str | None = setting(None, doc="a Ray cluster (null: RAY_ADDRESS, else a local "
                                  "Ray)")
    num_gpus_per_worker: float = setting(1.0, above=0, doc="GPUs one encode actor holds",
                                         fix="give the GPUs one encode actor holds, e.g. 1 "
                                             "(or 0.5 to share one)")
    batch_size: int = setting(50, min=1, doc="files per Ray task",
                              fix="give the files per Ray task, e.g. 50")


@dataclass(frozen=True)
class ServeSettings:
    idle_minutes: float = setting(30.0, doc="the service exits after this long idle (0: never)",
                                  fix="give minutes (30), or 0 to never exit")
    onnx_export: bool = setting(True, doc="builds export the query encoder to ONNX, so "
                                "searches never load torch")
    ui: bool = setting(False, doc="the service also serves the dashboard on 127.0.0.1; "
                       "`vq ui` prints its URL (docs/ui.md)")
    ui_port: int = setting(0, between=(0, 65535), doc="the served dashboard's port (0: a "
                           "free one)", fix="give a port from 1 to 65535, or 0 for a free one")
    ui_read_only: bool = setting(False, doc="the served dashboard changes nothing (as `vq ui "
                                 "--read-only`)")
    slot_idle_minutes: float = setting(10.0, min=0, doc="the service drops an index's "
                                       "snapshot after this long without a search of it "
                                       "(0: never); the next search reopens it",
                                       fix="give minutes (10), or 0 to keep every index open")


@dataclass(frozen=True)
class UiSettings:
    """`vq ui`, the local dashboard (docs/ui.md)."""

    editor_url: str = setting("vscode://file/{path}:{line}", doc="the link a hit's \"open\" "
                              "button follows: {path} the absolute file, {line} its line")


@dataclass(frozen=True)
class Settings:
    index_dir: str = setting(doc="where the index lives (a folder, or an object-store URI)")
    config_file: Path | None = setting(None, doc="the file these came from", key=False)
    model: str = setting(DEFAULT_MODEL, doc="a sentence-transformers model name or path")
    device: Device = setting("auto", doc="auto (CUDA, then MPS, then CPU), cuda, mps or cpu")
    batch_size: int = setting(64, min=1, doc="texts per encode batch")
    write_batch_files: int = setting(400, doc="files per write batch of a build")
    vector_dtype: VectorDtype = setting("float16", doc="how vectors are stored")
    max_file_bytes: int = setting(5_000_000, min=1, doc="larger files are an error, not read")
    max_document_bytes: int = setting(MAX_DOCUMENT_BYTES, min=1, doc="the same for PDF, HTML, "
                                      "notebooks and hooked documents, whose bytes are "
                                      "mostly not text")
    lock_path: str | None = setting(None, doc="the build lock file (default: in index_dir)")
    devices: tuple[str, ...] | None = setting(None, doc="two or more devices to encode on "
                                              "at once, e.g. [cuda:0, cuda:1]")
    encode_processes: int = setting(1, min=1, doc="CPU encode processes",
                                    fix="use 1 for one encode process, more to encode in "
                                        "parallel on CPU")
    storage_options: Mapping[str, str] = setting(factory=dict, doc="object-store options for "
                                                 "LanceDB; ${VAR} is expanded")
    hook_timeout_seconds: float = setting(60.0, above=0, doc="a hook running longer is killed",
                                          fix="give the seconds a hook may run, e.g. 60")
    hooks: Mapping[str, str] = setting(factory=dict, doc='extension -> command with {path}, '
                                       'e.g. ".odt": "pandoc -t gfm {path}"')
    hook_max_bytes: int = setting(20_000_000, min=1, doc="a hook printing more is killed")
    extract_max_page_chars: int = setting(250_000, min=1, doc="text kept from one PDF page")
    extract_max_chars: int = setting(10_000_000, min=1, doc="text kept from one document")
    build_max_seconds: float | None = setting(None, above=0, doc="a build holding the lock "
                                              "longer is reported by status and doctor as "
                                              "maybe hung (null: 10x the last build, at "
                                              "least an hour)")
    vaults: tuple[Vault, ...] = setting((), doc="id -> {path, include, exclude, kind, "
                                        "gitignore}")
    chunk: ChunkSettings = setting(ChunkSettings(), doc="how files are cut")
    search: SearchSettings = setting(SearchSettings(), doc="ranking and results")
    maintenance: MaintenanceSettings = setting(MaintenanceSettings(), doc="after each build")
    schedule: ScheduleSettings = setting(ScheduleSettings(), doc="`vq schedule`")
    engine: Engine = setting("local", doc="local, or ray (docs/ray.md)")
    ray: RaySettings = setting(RaySettings(), doc="engine: ray")
    serve: ServeSettings = setting(ServeSettings(), doc="the resident service")
    watch: bool = setting(True, doc="`vq serve` and `vq schedule` watch the vaults and index "
                          "changes as they happen (`vq watch` always does; docs/live.md)")
    watch_debounce_seconds: float = setting(1.0, above=0, doc="a watch batch is indexed once "
                                            "no event came for this long")
    ui: UiSettings = setting(UiSettings(), doc="`vq ui`")
    sources: Mapping[str, str] = setting(factory=dict, doc="where each value came from",
                                         key=False, compare=False)
    # a project config found upwards that defines hooks, until `vq hooks allow` trusts it
    hooks_need_trust: str = setting("", doc="", key=False, compare=False)

    def vault(self, vault_id: str) -> Vault | None:
        return next((v for v in self.vaults if v.id == vault_id), None)

    @property
    def build_lock(self) -> Path:
        """The lock lives on local disk even when the tables live in object storage."""
        if self.lock_path:
            return Path(self.lock_path)
        if paths.is_uri(self.index_dir):
            return paths.user_data_dir() / "locks" / (_slug(self.index_dir) + ".lock")
        return Path(self.index_dir) / "build.lock"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")
