"""Settings: config file + ``VQ_*`` environment + flags, parsed once, frozen.

Precedence is flag > environment > file > default. Every effective value
remembers where it came from (``Settings.sources``) so ``vq doctor`` can show
it. Validation fails with the file, the key and the fix.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from vq.core import config_cache, paths, yaml_bounds
from vq.core.errors import ConfigError

KINDS = ("notes", "code", "docs")
DEVICES = ("auto", "cuda", "mps", "cpu")
METHODS = ("hybrid", "lexical", "dense")
FUSIONS = ("convex", "rrf")
DEFAULT_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Vault:
    id: str
    path: Path
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    kind: str = "notes"
    gitignore: bool = True


@dataclass(frozen=True)
class ChunkSettings:
    max_chars: int = 1500
    min_chars: int = 200


@dataclass(frozen=True)
class SearchSettings:
    limit: int = 10
    method: str = "hybrid"
    pool: int = 100
    rrf_k: int = 60
    rerank_model: str | None = None
    rerank_top: int = 30
    recency_half_life_days: float = 30.0
    # -- fusion and the heading field, chosen on dev sets: docs/decisions.md#convex-fusion --
    fusion: str = "convex"        # convex (min-max-normalised scores, weighted) | rrf
    lexical_weight: float = 0.4   # convex: BM25's weight; piece and section vectors share 1 - it
    heading_boost: float = 0.0    # > 0: BM25 over the breadcrumb field too, with this weight
    per_file_cap: int = 0         # > 0: code hits of one file before other files' (0: off)
    # -- resident service --
    autostart: bool = True       # a search that finds no service starts `vq serve` detached


@dataclass(frozen=True)
class MaintenanceSettings:
    cleanup_grace_minutes: float = 10.0
    vector_index_min_rows: int = 100_000


@dataclass(frozen=True)
class ScheduleSettings:
    cron: str = "*/5 * * * *"
    jitter_seconds: int = 20
    misfire_grace_seconds: int = 120
    log_file: str | None = None
    log_max_bytes: int = 10_000_000
    log_backups: int = 3
    stop_timeout_seconds: int = 60


# --- build engine: `engine`, `ray.*` -----------------------------------------------------
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RaySettings:
    """Where `engine: ray` sends the chunk + encode work (see docs/ray.md).

    ``address`` None: join ``RAY_ADDRESS`` if set, else start a local Ray on this
    machine. ``batch_size``: files per Ray task; a write batch (``write_batch_files``)
    is split into tasks and committed once when all of them are back.
    """

    address: str | None = None
    num_gpus_per_worker: float = 1.0
    batch_size: int = 50


def _check_engine(label: str, kwargs: dict[str, Any]) -> None:
    ray = kwargs.get("ray")
    if ray is None:
        return
    if not ray.num_gpus_per_worker > 0:
        raise ConfigError(label, "ray.num_gpus_per_worker",
                          f"must be more than 0, got {ray.num_gpus_per_worker}",
                          "give the GPUs one encode actor holds, e.g. 1 (or 0.5 to share one)")
    if ray.batch_size < 1:
        raise ConfigError(label, "ray.batch_size", "must be at least 1",
                          "give the files per Ray task, e.g. 50")
    if ray.address is not None and not ray.address.strip():
        raise ConfigError(label, "ray.address", "is empty",
                          "give a cluster address like ray://head:10001 or host:6379, "
                          "or null to start a local Ray")
# --- end build engine --------------------------------------------------------------------


# -- resident service: `vq serve` -----------------------------------------------------------

@dataclass(frozen=True)
class ServeSettings:
    idle_minutes: float = 30.0   # exit after this long without a request; 0: never
    onnx_export: bool = True     # builds export the query encoder to ONNX (searches skip torch)


def _check_serve(label: str, serve: ServeSettings) -> None:
    if serve.idle_minutes < 0:
        raise ConfigError(label, "serve.idle_minutes", f"must not be negative, got "
                          f"{serve.idle_minutes:g}", "give minutes (30), or 0 to never exit")

# -- end resident service --------------------------------------------------------------------


@dataclass(frozen=True)
class UiSettings:
    """`vq ui`, the local dashboard (docs/ui.md)."""

    # the link a hit's "open" button follows; {path} is the absolute file, {line} its line
    editor_url: str = "vscode://file/{path}:{line}"


def _check_ui(label: str, ui: UiSettings) -> None:
    template = ui.editor_url
    scheme = template.split(":", 1)[0].lower() if ":" in template else ""
    if "{path}" not in template or not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme) \
            or scheme in ("javascript", "data", "vbscript"):
        raise ConfigError(label, "ui.editor_url", f"{template!r} is not a link template with "
                          "{path}", 'write e.g. "vscode://file/{path}:{line}" or '
                          '"idea://open?file={path}&line={line}"')
    try:
        template.format(path="/x", line=1)
    except (KeyError, IndexError, ValueError):
        raise ConfigError(label, "ui.editor_url", "only {path} and {line} may appear in braces",
                          'write e.g. "vscode://file/{path}:{line}"') from None


SECTIONS: dict[str, type] = {
    "chunk": ChunkSettings,
    "search": SearchSettings,
    "maintenance": MaintenanceSettings,
    "schedule": ScheduleSettings,
    "ray": RaySettings,
    "serve": ServeSettings,
    "ui": UiSettings,
}


@dataclass(frozen=True)
class Settings:
    index_dir: str
    config_file: Path | None = None
    model: str = DEFAULT_MODEL
    device: str = "auto"
    batch_size: int = 64
    write_batch_files: int = 400
    vector_dtype: str = "float16"
    max_file_bytes: int = 5_000_000
    lock_path: str | None = None
    devices: tuple[str, ...] | None = None
    encode_processes: int = 1
    storage_options: Mapping[str, str] = field(default_factory=dict)
    hook_timeout_seconds: float = 60.0
    hooks: Mapping[str, str] = field(default_factory=dict)  # ".docx" -> "pandoc ... {path}"
    hook_max_bytes: int = 20_000_000  # see LIMIT_SCALARS below
    extract_max_page_chars: int = 250_000  # bounds on PDF text (handlers/pdf.py)
    extract_max_chars: int = 10_000_000
    build_max_seconds: float | None = None  # a lock held longer is reported (core/lock.py)
    vaults: tuple[Vault, ...] = ()
    chunk: ChunkSettings = ChunkSettings()
    search: SearchSettings = SearchSettings()
    maintenance: MaintenanceSettings = MaintenanceSettings()
    schedule: ScheduleSettings = ScheduleSettings()
    engine: str = "local"
    ray: RaySettings = RaySettings()
    serve: ServeSettings = ServeSettings()
    # `vq serve` and `vq schedule` watch the vaults (`vq watch` always does);
    # a batch is indexed once no event came for watch_debounce_seconds (docs/live.md)
    watch: bool = True
    watch_debounce_seconds: float = 1.0
    ui: UiSettings = UiSettings()
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    # a project config found upwards that defines hooks, until `vq hooks allow` trusts it
    hooks_need_trust: str = field(default="", compare=False)

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


SCALARS: dict[str, tuple[type, ...]] = {
    "index_dir": (str,),
    "model": (str,),
    "device": (str,),
    "batch_size": (int,),
    "write_batch_files": (int,),
    "vector_dtype": (str,),
    "max_file_bytes": (int,),
    "lock_path": (str, type(None)),
    "devices": (list, type(None)),
    "encode_processes": (int,),
    "hook_timeout_seconds": (float, int),
    "engine": (str,),
    "watch": (bool,),
    "watch_debounce_seconds": (float, int),
}
# --- limits on hostile input, and values that must be at least 1 -----------------------
# hook_max_bytes caps what one hook may print for one file (past it the hook is
# killed and that file gets an error); AT_LEAST_ONE lists keys whose 0 used to
# crash a build or a search (batch_size: 0, chunk.max_chars: 0) instead of
# failing as a config error that names the key.
LIMIT_SCALARS: dict[str, tuple[type, ...]] = {"hook_max_bytes": (int,),
                                              "extract_max_page_chars": (int,),
                                              "extract_max_chars": (int,),
                                              "build_max_seconds": (float, int, type(None))}
SCALARS.update(LIMIT_SCALARS)
AT_LEAST_ONE = ("batch_size", "max_file_bytes", "hook_max_bytes", "encode_processes",
                "extract_max_page_chars", "extract_max_chars", "schedule.misfire_grace_seconds",
                "chunk.max_chars", "search.limit", "search.pool")
POSITIVE = ("hook_timeout_seconds", "search.recency_half_life_days", "build_max_seconds",
            "watch_debounce_seconds")
MAX_RESULTS = 1_000_000  # LanceDB's limit overflows its integer past ~4e9: a traceback
AT_MOST = {"search.limit": MAX_RESULTS, "search.pool": MAX_RESULTS}


def _check_limits(label: str, kwargs: dict[str, Any]) -> None:
    for key in AT_LEAST_ONE:
        value = _dotted(kwargs, key)
        if value is not None and value < 1:
            raise ConfigError(label, key, f"must be at least 1, got {value}",
                              f"set {key} to 1 or more (or remove it for the default)")
    for key in POSITIVE:
        value = _dotted(kwargs, key)
        if value is not None and value <= 0:
            raise ConfigError(label, key, f"must be more than 0, got {value}",
                              f"set {key} to a positive number (or remove it)")
    for key, most in AT_MOST.items():
        value = _dotted(kwargs, key)
        if value is not None and value > most:
            raise ConfigError(label, key, f"must be at most {most}, got {value}",
                              f"set {key} to {most} or less")
# --- end of the limits ------------------------------------------------------------------


CHOICES = {"device": DEVICES, "vector_dtype": ("float16", "float32"), "search.method": METHODS,
           "engine": ENGINES, "search.fusion": FUSIONS}
RANGES = {"search.lexical_weight": (0.0, 1.0), "search.heading_boost": (0.0, 100.0),
          "search.per_file_cap": (0, MAX_RESULTS)}
TOP_KEYS = (*SCALARS, "storage_options", "hooks", "vaults", *SECTIONS)
DEVICE_ENTRY = re.compile(r"(cpu|cuda|mps|xpu|npu)(:\d+)?")
VAULT_KEYS = ("path", "include", "exclude", "kind", "gitignore")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


class DuplicateKey(Exception):
    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


_LOADER: Any = None


def _unique_key_loader() -> Any:
    """PyYAML keeps the last of two equal keys; a duplicate vault id must be an error.

    Built on first use: yaml is imported only when a config file is parsed, not
    when ``vq.core.config_cache`` already holds it (the `vq search` thin path)."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class _UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):
                seen: set = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    if key in seen:
                        raise DuplicateKey(str(key), key_node.start_mark.line + 1)
                    seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _LOADER = _UniqueKeyLoader
    return _LOADER


PROJECT = "project .vq.yaml"  # found by the upward search: its hooks need `vq hooks allow`


def locate_config(explicit: str | None, cwd: Path | None = None) -> tuple[Path | None, str]:
    """The config file to use and why: --config, VQ_CONFIG, .vq.yaml upwards, user config."""
    if explicit:
        return Path(explicit).expanduser(), "flag --config"
    if os.environ.get("VQ_CONFIG"):
        return Path(os.environ["VQ_CONFIG"]).expanduser(), "env VQ_CONFIG"
    found = paths.find_project_config((cwd or Path.cwd()).resolve())
    if found:
        return found, PROJECT
    user = paths.user_config_file()
    if user.is_file():
        return user, "user config"
    return None, "none (defaults)"


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse the YAML file into a mapping, or fail naming the file and the problem."""
    _refuse_foreign(path)
    seen = config_cache.stat(path)
    cached = config_cache.load(path, seen)
    if cached is not None:
        return cached
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), "", "config file not found",
                          "create it with `vq init`, or point --config/VQ_CONFIG at one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc}", "check the file") from None
    import yaml

    try:
        yaml_bounds.check(text)  # a YAML bomb is refused before anything expands it
        data = yaml.load(text, Loader=_unique_key_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml_bounds.TooExpanded as exc:
        raise ConfigError(str(path), "", f"refused: {exc}",
                          "remove the repeated anchors (*name) from the file") from None
    except DuplicateKey as exc:
        raise ConfigError(str(path), exc.key, f"duplicate key (line {exc.line})",
                          "each key, and each vault id, may appear once: remove or rename one",
                          ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else ""
        raise ConfigError(str(path), where, f"malformed YAML: {getattr(exc, 'problem', exc)}",
                          "fix the YAML syntax (see config.example.yaml)") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", "the top level must be a mapping of keys",
                          "see config.example.yaml")
    config_cache.save(path, seen, data)
    return data


def _refuse_foreign(path: Path) -> None:
    """A config another user owns or can write is never obeyed (``vq.core.trust``)."""
    from vq.core import trust

    try:
        st = os.stat(path)
    except OSError:
        return  # reading it says what is wrong
    problem = trust.owner_problem(st)
    if problem:
        raise ConfigError(str(path), "", f"refused: {problem}, and vq runs what a config "
                          "says (hooks) as you", trust.fix_for(path, problem))


def load_settings(config: str | None = None, overrides: Mapping[str, Any] | None = None,
                  cwd: Path | None = None) -> Settings:
    """The effective settings: defaults < file < ``VQ_*`` env < ``overrides`` (flags)."""
    path, why = locate_config(config, cwd)
    data = read_config_file(path) if path else {}
    label = str(path) if path else "<defaults>"
    sources: dict[str, str] = {}
    merged: dict[str, Any] = {}
    for key, value in data.items():
        _merge(merged, sources, key, value, f"file {label}")
    for key, value in _env_values().items():
        _merge(merged, sources, key, value, f"env VQ_{key.upper().replace('.', '__')}")
    for key, value in (overrides or {}).items():
        if value is not None:
            _merge(merged, sources, key, value, f"flag --{key.replace('_', '-')}")
    base = path.parent if path else Path.cwd()
    try:
        settings = _build(merged, label, base, path)
    except ConfigError as exc:  # a bad VQ_* value or flag is not the file's fault
        source = sources.get(exc.key, "")
        if not source or source.startswith("file"):
            raise
        raise ConfigError(source, exc.key, exc.problem, exc.fix) from None
    sources["config_file"] = f"{label} ({why})"
    untrusted = ""
    if path is not None and why == PROJECT and data.get("hooks"):
        from vq.core import trust

        untrusted = "" if trust.is_trusted(path) else str(path)
    return replace(settings, sources=sources, hooks_need_trust=untrusted)


def _merge(merged: dict, sources: dict, key: str, value: Any, source: str) -> None:
    if "." in key:
        section, sub = key.split(".", 1)
        target = merged.setdefault(section, {})
        if isinstance(target, dict):
            target[sub] = value
    elif key in SECTIONS and isinstance(value, dict) and isinstance(merged.get(key), dict):
        merged[key].update(value)
        for sub in value:
            sources[f"{key}.{sub}"] = source
        return
    else:
        merged[key] = value
    sources[key] = source
    if isinstance(value, dict) and key in SECTIONS:
        for sub in value:
            sources[f"{key}.{sub}"] = source


def _env_values() -> dict[str, Any]:
    """``VQ_DEVICE=cpu`` → device; ``VQ_SEARCH__POOL=200`` → search.pool (YAML-typed)."""
    out: dict[str, Any] = {}
    for name, raw in os.environ.items():
        if not name.startswith("VQ_") or name == "VQ_CONFIG":
            continue
        key = name[3:].lower().replace("__", ".")
        top = key.split(".", 1)[0]
        if top in SCALARS or (top in SECTIONS and "." in key):
            out[key] = _env_scalar(raw)
            if (top in ("index_dir", "model", "lock_path") or key == "ray.address") \
                    and out[key] is not None:
                out[key] = raw
    return out


_PLAIN = {"true": True, "false": False, "null": None}
_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")


def _env_scalar(raw: str) -> Any:
    """A ``VQ_*`` value as YAML reads it; the common plain ones without importing yaml."""
    if not raw:
        return raw
    if raw in _PLAIN:
        return _PLAIN[raw]
    if _DECIMAL.fullmatch(raw):
        return int(raw)
    import yaml

    try:
        yaml_bounds.check(raw)
        return yaml.safe_load(raw)
    except (yaml.YAMLError, yaml_bounds.TooExpanded):
        return raw


def _build(data: dict[str, Any], label: str, base: Path, path: Path | None) -> Settings:
    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        raise ConfigError(label, unknown[0], "unknown key",
                          f"remove it; valid keys are: {', '.join(TOP_KEYS)}")
    kwargs: dict[str, Any] = {}
    for key, types in SCALARS.items():
        if key in data:
            kwargs[key] = _check(label, key, data[key], types)
    for key, cls in SECTIONS.items():
        if key in data:
            kwargs[key] = _section(label, key, data[key], cls)
    kwargs["vaults"] = _vaults(label, data.get("vaults") or {}, base)
    kwargs["storage_options"] = _storage_options(label, data.get("storage_options") or {})
    kwargs["hooks"] = _hooks(label, data.get("hooks") or {}, kwargs.get("hook_timeout_seconds"))
    if kwargs.get("devices") is not None:
        kwargs["devices"] = _devices(label, kwargs["devices"])
    if kwargs.get("encode_processes") == 0:
        raise ConfigError(label, "encode_processes", "must be at least 1",
                          "use 1 for one encode process, more to encode in parallel on CPU")
    _check_limits(label, kwargs)
    for key, allowed in CHOICES.items():
        value = _dotted(kwargs, key)
        if value is not None and value not in allowed:
            raise ConfigError(label, key, f"{value!r} is not one of {', '.join(allowed)}",
                              f"set {key} to one of: {', '.join(allowed)}")
    _check_engine(label, kwargs)
    for key, (low, high) in RANGES.items():
        value = _dotted(kwargs, key)
        if value is not None and not low <= value <= high:
            raise ConfigError(label, key, f"{value!r} is out of range",
                              f"set {key} between {low:g} and {high:g}")
    if "serve" in kwargs:
        _check_serve(label, kwargs["serve"])
    if "ui" in kwargs:
        _check_ui(label, kwargs["ui"])
    kwargs["index_dir"] = _index_dir(kwargs.get("index_dir"), base, path)
    _check_not_a_vault(label, kwargs["index_dir"], kwargs["vaults"])
    if kwargs.get("lock_path"):
        kwargs["lock_path"] = str(_resolve(kwargs["lock_path"], base))
    return Settings(config_file=path, **kwargs)


def _check_not_a_vault(label: str, index_dir: str, vaults: tuple[Vault, ...]) -> None:
    """An index whose folder is a vault's root would index its own files."""
    if paths.is_uri(index_dir):
        return
    here = os.path.realpath(index_dir)
    for vault in vaults:
        if os.path.realpath(vault.path) == here:
            raise ConfigError(label, "index_dir", f"is the root of vault {vault.id!r}: the "
                              "index would index its own files",
                              f"give the index a folder of its own, e.g. {here}/.vq (a "
                              "hidden folder inside a vault is never indexed)")


def _devices(label: str, value: list) -> tuple[str, ...]:
    """Pool targets for multi-device encode; one device is what ``device`` is for."""
    bad = [d for d in value if not isinstance(d, str) or not DEVICE_ENTRY.fullmatch(d)]
    if bad:
        raise ConfigError(label, "devices", f"{bad[0]!r} is not a torch device name",
                          "list devices like [cuda:0, cuda:1] (or cpu entries), or null")
    if len(value) < 2:
        raise ConfigError(label, "devices", "a multi-device list needs two or more devices",
                          "for one device set `device` instead, and devices: null")
    return tuple(value)


def _hooks(label: str, value: Any, timeout: float | None) -> dict[str, str]:
    """Extension -> command. ``{path}`` is how the command names the file (one argument,
    never through a shell), so a command without it is a mistake caught here."""
    if timeout is not None and timeout <= 0:
        raise ConfigError(label, "hook_timeout_seconds", "must be more than 0",
                          "give the seconds a hook may run, e.g. 60")
    if not isinstance(value, dict):
        raise ConfigError(label, "hooks", f"expected a mapping, got {type(value).__name__}",
                          'write hooks: {".docx": "pandoc -t gfm {path}"}')
    out = {}
    for ext, command in value.items():
        key = f"hooks.{ext}"
        if not isinstance(ext, str) or not ext.startswith(".") or len(ext) < 2 or "/" in ext:
            raise ConfigError(label, key, "a hook key is a file extension with its dot",
                              'write the extension like ".docx"')
        if not isinstance(command, str) or "{path}" not in command:
            raise ConfigError(label, key, "expected a command containing {path}",
                              'write e.g. "pandoc -t gfm {path}": {path} becomes the file')
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(label, key, f"cannot split the command: {exc}",
                              "balance its quotes") from None
        if _path_in_shell_script(argv):
            raise ConfigError(label, key, "{path} is inside a shell script (sh -c '...'): a "
                              "file named `$(...)` or `;...` would run commands",
                              "pass it as an argument instead: sh -c '... \"$1\"' sh {path}")
        out[ext.lower()] = command
    return out


# Programs whose -c / -e option takes code: {path} inside that code is parsed as code.
INTERPRETERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "python",
                          "python3", "perl", "ruby", "node", "php"})


def _path_in_shell_script(argv: list[str]) -> bool:
    """True for ``sh -c '... {path} ...'`` (or ``python -c``, ``perl -e``...): the
    interpreter would read the file name as code, so a name like ``$(rm -rf ~)`` runs."""
    for i, arg in enumerate(argv):
        if os.path.basename(arg).rstrip("0123456789.") not in INTERPRETERS:
            continue
        for j in range(i + 1, len(argv) - 1):
            option = argv[j]
            if not option.startswith("-") or option.startswith("--"):
                return False
            if set(option[1:]) & {"c", "e"}:
                return "{path}" in argv[j + 1]
        return False
    return False


def _storage_options(label: str, value: Any) -> dict[str, str]:
    """LanceDB's object-store options, all strings; ``${VAR}`` is expanded from the
    environment so a secret can stay out of the file."""
    if not isinstance(value, dict):
        raise ConfigError(label, "storage_options", f"expected a mapping, got "
                          f"{type(value).__name__}", "write storage_options: {aws_region: "
                          "eu-west-1, aws_endpoint: https://...} (see config.example.yaml)")
    out = {}
    for key, sub in value.items():
        if not isinstance(sub, (str, int, float, bool)):
            raise ConfigError(label, f"storage_options.{key}", "expected a string value, got "
                              f"{type(sub).__name__}", "give each option a plain value")
        text = str(sub).lower() if isinstance(sub, bool) else str(sub)
        out[str(key)] = os.path.expandvars(text)
    return out


def _dotted(kwargs: dict, key: str) -> Any:
    if "." not in key:
        return kwargs.get(key)
    section, sub = key.split(".")
    return getattr(kwargs[section], sub) if section in kwargs else None


def _index_dir(value: str | None, base: Path, path: Path | None) -> str:
    if value:
        return value if paths.is_uri(value) else str(_resolve(value, base))
    if path is None or path == paths.user_config_file():
        return str(paths.user_data_dir() / "index")
    return str(path.parent / ".vq")


def _resolve(value: str, base: Path) -> Path:
    """Relative paths in a config file are relative to that file, not to the cwd."""
    p = Path(os.path.expandvars(value)).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def _check(label: str, key: str, value: Any, types: tuple[type, ...]) -> Any:
    """The value if it has one of ``types``; every number must be finite and not
    negative (``.nan``, ``.inf`` and ``-5`` used to pass and crash later)."""
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
        raise ConfigError(label, key, f"expected {names}, got {type(value).__name__} {value!r}",
                          f"give {key} a value of type {names}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(label, key, f"must be a finite number, got {value}",
                          f"give {key} an ordinary number (or remove it for the default)")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 \
            and key not in RANGES:  # a ranged key says its range instead
        raise ConfigError(label, key, f"must not be negative, got {value:g}",
                          "use a value >= 0")
    return value


def _section(label: str, name: str, value: Any, cls: type) -> Any:
    if not isinstance(value, dict):
        raise ConfigError(label, name, f"expected a mapping, got {type(value).__name__}",
                          f"write {name}: followed by indented keys (see config.example.yaml)")
    known = {f.name: f for f in fields(cls)}
    out = {}
    for key, sub in value.items():
        if key not in known:
            raise ConfigError(label, f"{name}.{key}", "unknown key",
                              f"valid keys under {name}: {', '.join(known)}")
        out[key] = _check(label, f"{name}.{key}", sub, _field_types(str(known[key].type)))
    return cls(**out)


def _field_types(annotation: str) -> tuple[type, ...]:
    table = {"int": (int,), "float": (float, int), "str": (str,),
             "str | None": (str, type(None)), "bool": (bool,)}
    return table[str(annotation)]


def _vaults(label: str, data: Any, base: Path) -> tuple[Vault, ...]:
    if not isinstance(data, dict):
        raise ConfigError(label, "vaults", "expected a mapping of vault id to settings",
                          "write vaults: {ID: {path: ...}} (see config.example.yaml)")
    return tuple(_vault(label, str(vid), spec, base) for vid, spec in data.items())


def _vault(label: str, vid: str, spec: Any, base: Path) -> Vault:
    key = f"vaults.{vid}"
    if not vid or not all(c.isalnum() or c in "-_." for c in vid):
        raise ConfigError(label, key, "a vault id may use letters, digits, '-', '_' and '.'",
                          "rename the vault")
    if isinstance(spec, str):
        spec = {"path": spec}
    if not isinstance(spec, dict) or "path" not in spec:
        raise ConfigError(label, key, "missing path", f"add `path:` under {key}")
    unknown = [k for k in spec if k not in VAULT_KEYS]
    if unknown:
        raise ConfigError(label, f"{key}.{unknown[0]}", "unknown key",
                          f"valid keys: {', '.join(VAULT_KEYS)}")
    path = _check(label, f"{key}.path", spec["path"], (str,))
    kind = _check(label, f"{key}.kind", spec.get("kind", "notes"), (str,))
    if kind not in KINDS:
        raise ConfigError(label, f"{key}.kind", f"{kind!r} is not one of {', '.join(KINDS)}",
                          f"set kind to one of: {', '.join(KINDS)}")
    globs = {}
    for name in ("include", "exclude"):
        value = spec.get(name) or []
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
            raise ConfigError(label, f"{key}.{name}", "expected a list of glob strings",
                              f"write {name}: [\"*.md\", \"docs/**\"]")
        globs[name] = tuple(value)
    gitignore = _check(label, f"{key}.gitignore", spec.get("gitignore", True), (bool,))
    return Vault(vid, _resolve(path, base), globs["include"], globs["exclude"], kind, gitignore)
