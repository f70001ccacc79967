"""Settings: config file + ``VQ_*`` environment + flags, parsed once, frozen.

Precedence is flag > environment > file > default. Every effective value
remembers where it came from (``Settings.sources``) so ``vq doctor`` can show
it. Validation fails with the file, the key and the fix. What each key is, its
type, default and bounds, is declared once in ``vq.core.settings_schema``; this
module derives the checks from those declarations.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import typing
from collections.abc import Mapping
from dataclasses import Field, fields, is_dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast, get_args, get_origin

from vq.core import paths, yaml_bounds
from vq.core.config_file import PROJECT, locate_config, read_config_file  # noqa: F401
from vq.core.errors import ConfigError
from vq.core.settings_schema import (  # noqa: F401 - the settings' public names live here too
    DEFAULT_MODEL,
    DEVICES,
    ENGINES,
    FUSIONS,
    KINDS,
    MAX_RESULTS,
    METHODS,
    ChunkSettings,
    MaintenanceSettings,
    RaySettings,
    ScheduleSettings,
    SearchSettings,
    ServeSettings,
    Settings,
    UiSettings,
    Vault,
)

DEVICE_ENTRY = re.compile(r"(cpu|cuda|mps|xpu|npu)(:\d+)?")
CUSTOM = ("vaults", "storage_options", "hooks", "devices")  # parsed by their own functions


def config_fields(cls: type) -> dict[str, Field]:
    """The config keys a settings dataclass declares (state fields left out)."""
    return {f.name: f for f in fields(cls) if f.metadata.get("key", True)}


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def sections() -> dict[str, type]:
    """Top-level keys that hold a mapping of their own (``search:``, ``serve:`` ...)."""
    hints = _hints(Settings)
    return {name: hints[name] for name in config_fields(Settings) if is_dataclass(hints[name])}


def top_keys() -> tuple[str, ...]:
    return tuple(config_fields(Settings))


def scalar_keys() -> tuple[str, ...]:
    """Top-level keys holding one value (not a section, not a mapping or list of their own)."""
    return tuple(k for k in top_keys() if k not in sections()
                 and k not in ("vaults", "hooks", "storage_options"))


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
        settings = build_settings(merged, label, base, path)
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
    elif key in sections() and isinstance(value, dict) and isinstance(merged.get(key), dict):
        merged[key].update(value)
        for sub in value:
            sources[f"{key}.{sub}"] = source
        return
    else:
        merged[key] = value
    sources[key] = source
    if isinstance(value, dict) and key in sections():
        for sub in value:
            sources[f"{key}.{sub}"] = source


def _env_values() -> dict[str, Any]:
    """``VQ_DEVICE=cpu`` → device; ``VQ_SEARCH__POOL=200`` → search.pool (YAML-typed).
    A key declared as text (a path, a model name) keeps the raw string unless it is null."""
    out: dict[str, Any] = {}
    scalars = set(scalar_keys())
    for name, raw in os.environ.items():
        if not name.startswith("VQ_") or name == "VQ_CONFIG":
            continue
        key = name[3:].lower().replace("__", ".")
        top = key.split(".", 1)[0]
        if top in scalars or (top in sections() and "." in key):
            value = _env_scalar(raw)
            out[key] = raw if value is not None and _is_text(key) else value
    return out


def _is_text(key: str) -> bool:
    """A free-text key (``str`` or ``str | None``, not a list of choices)."""
    cls, name = (Settings, key) if "." not in key else (sections()[key.split(".")[0]],
                                                        key.split(".", 1)[1])
    hint = _hints(cls).get(name)
    return hint is str or (get_origin(hint) is not Literal and str in get_args(hint))


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


def build_settings(data: dict[str, Any], label: str, base: Path, path: Path | None
                   ) -> Settings:
    """Settings from a merged mapping, every key checked against its declaration; relative
    paths resolve against ``base`` (the config file's folder)."""
    known = top_keys()
    unknown = [k for k in data if k not in known]
    if unknown:
        raise ConfigError(label, unknown[0], "unknown key",
                          f"remove it; valid keys are: {', '.join(known)}")
    kwargs = _values(label, "", Settings, {k: v for k, v in data.items() if k not in CUSTOM})
    kwargs["vaults"] = _vaults(label, data.get("vaults") or {}, base)
    kwargs["storage_options"] = _storage_options(label, data.get("storage_options") or {})
    kwargs["hooks"] = _hooks(label, data.get("hooks") or {})
    if data.get("devices") is not None:
        kwargs["devices"] = _devices(label, _check(label, "devices", data["devices"], (list,)))
    ray = kwargs.get("ray")
    if ray is not None and ray.address is not None and not ray.address.strip():
        raise ConfigError(label, "ray.address", "is empty",
                          "give a cluster address like ray://head:10001 or host:6379, "
                          "or null to start a local Ray")
    if "ui" in kwargs:
        _check_ui(label, kwargs["ui"])
    kwargs["index_dir"] = _index_dir(kwargs.get("index_dir"), base, path)
    _check_not_a_vault(label, kwargs["index_dir"], kwargs["vaults"])
    if kwargs.get("lock_path"):
        kwargs["lock_path"] = str(_resolve(kwargs["lock_path"], base))
    return Settings(config_file=path, **kwargs)


def _values(label: str, prefix: str, cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """Each declared key in ``data`` checked against its declaration; sections recursively."""
    declared = config_fields(cls)
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key not in declared:
            raise ConfigError(label, name, "unknown key", f"valid keys under "
                              f"{prefix.rstrip('.')}: {', '.join(declared)}")
        hint = _hints(cls)[key]
        if is_dataclass(hint):
            if not isinstance(value, dict):
                raise ConfigError(label, name, f"expected a mapping, got "
                                  f"{type(value).__name__}", f"write {name}: followed by "
                                  "indented keys (see config.example.yaml)")
            section = cast(type, hint)
            out[key] = section(**_values(label, f"{name}.", section, value))
        else:
            out[key] = _value(label, name, value, hint, declared[key].metadata)
    return out


def _value(label: str, key: str, value: Any, hint: Any, meta: Mapping[str, Any]) -> Any:
    """One value: its type, its choices (a ``Literal``), finite, then its bounds."""
    args = get_args(hint)
    choices = args if get_origin(hint) is Literal else ()
    types = (str,) if choices else tuple(bool if a is bool else a for a in (args or (hint,))
                                         if isinstance(a, type))
    between = meta.get("between")
    value = _check(label, key, value, types, negative_ok=between is not None)
    if choices and value not in choices:
        raise ConfigError(label, key, f"{value!r} is not one of {', '.join(choices)}",
                          f"set {key} to one of: {', '.join(choices)}")
    if value is None or isinstance(value, (str, bool)):
        return value
    _bounds(label, key, value, meta)
    return value


def _bounds(label: str, key: str, value: float, meta: Mapping[str, Any]) -> None:
    fix, n = meta.get("fix"), _number
    if meta.get("between") is not None:
        low, high = meta["between"]
        if not low <= value <= high:
            raise ConfigError(label, key, f"{value!r} is out of range",
                              fix or f"set {key} between {n(low)} and {n(high)}")
    if meta.get("min") is not None and value < meta["min"]:
        raise ConfigError(label, key, f"must be at least {n(meta['min'])}, got {n(value)}",
                          fix or f"set {key} to {n(meta['min'])} or more (or remove it for "
                          "the default)")
    if meta.get("above") is not None and value <= meta["above"]:
        raise ConfigError(label, key, f"must be more than {n(meta['above'])}, got {n(value)}",
                          fix or f"set {key} to a positive number (or remove it)")
    if meta.get("max") is not None and value > meta["max"]:
        raise ConfigError(label, key, f"must be at most {n(meta['max'])}, got {n(value)}",
                          fix or f"set {key} to {n(meta['max'])} or less")


def _number(x: float) -> str:
    """1000000, not 1e+06: a bound as the user would type it."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _check(label: str, key: str, value: Any, types: tuple[type, ...],
           negative_ok: bool = False) -> Any:
    """The value if it has one of ``types``; every number must be finite and (unless
    ``negative_ok``) not negative: ``.nan``, ``.inf`` and ``-5`` used to pass and crash later."""
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        names = " or ".join("null" if t is type(None) else _type_name(t) for t in types)
        raise ConfigError(label, key, f"expected {names}, got {type(value).__name__} {value!r}",
                          f"give {key} a value of type {names}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(label, key, f"must be a finite number, got {value}",
                          f"give {key} an ordinary number (or remove it for the default)")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 \
            and not negative_ok:
        raise ConfigError(label, key, f"must not be negative, got {value:g}",
                          "use a value >= 0")
    return value


def _type_name(t: type) -> str:
    return "list" if t is tuple else t.__name__


def _check_ui(label: str, ui: UiSettings) -> None:
    """The editor link is followed by a browser: a web scheme with {path}, no script."""
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


def _hooks(label: str, value: Any) -> dict[str, str]:
    """Extension -> command. ``{path}`` is how the command names the file (one argument,
    never through a shell), so a command without it is a mistake caught here."""
    if not isinstance(value, dict):
        raise ConfigError(label, "hooks", f"expected a mapping, got {type(value).__name__}",
                          'write hooks: {".odt": "pandoc -t gfm {path}"}')
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
    declared = config_fields(Vault)
    unknown = [k for k in spec if k not in declared]
    if unknown:
        raise ConfigError(label, f"{key}.{unknown[0]}", "unknown key",
                          f"valid keys: {', '.join(declared)}")
    path = _check(label, f"{key}.path", spec["path"], (str,))
    hints = _hints(Vault)
    kind = _value(label, f"{key}.kind", spec.get("kind", "notes"), hints["kind"], {})
    gitignore = _value(label, f"{key}.gitignore", spec.get("gitignore", True),
                       hints["gitignore"], {})
    globs = {}
    for name in ("include", "exclude"):
        value = spec.get(name) or []
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
            raise ConfigError(label, f"{key}.{name}", "expected a list of glob strings",
                              f"write {name}: [\"*.md\", \"docs/**\"]")
        globs[name] = tuple(value)
    return Vault(vid, _resolve(path, base), globs["include"], globs["exclude"], kind, gitignore)
