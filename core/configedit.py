"""Edit the config file in place: comments and key order survive, writes are atomic.

ruamel.yaml round-trips the file; the new text is validated by the same
loader as every command before it replaces the old one (temp file, fsync,
``os.replace``), so a failed write never leaves a truncated or invalid config.
Each edit holds a ``filelock`` on ``<config>.lock`` from the read to the
replace: eight simultaneous `vq vault add` used to keep two of the eight.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vq.core import yaml_bounds
from vq.core.config_file import read_config_file
from vq.core.errors import ConfigError, VqError
from vq.core.settings import Settings, build_settings


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML()
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    return y


EDIT_LOCK_SECONDS = 30.0


@contextmanager
def editing(path: Path) -> Iterator[None]:
    """Hold the config's edit lock (beside it) across a read-modify-write."""
    from filelock import FileLock, Timeout

    lock_path = path.with_name(path.name + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock_path), timeout=EDIT_LOCK_SECONDS):
            yield
    except Timeout:
        raise VqError(f"another vq command has been editing {path} for "
                      f"{EDIT_LOCK_SECONDS:g}s", f"try again; if nothing is running, delete "
                      f"{lock_path}") from None


def load_document(path: Path) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if not path.exists():
        return CommentedMap()
    read_config_file(path)  # the same validation errors as every other command
    text = path.read_text(encoding="utf-8")
    try:
        yaml_bounds.check(text)  # the file may have changed since: ruamel expands too
    except yaml_bounds.TooExpanded as exc:
        raise ConfigError(str(path), "", f"refused: {exc}",
                          "remove the repeated anchors (*name) from the file") from None
    doc = _yaml().load(text)
    return doc if doc is not None else CommentedMap()


def save_document(path: Path, doc: Any) -> Settings:
    """Validate the new text, then atomically replace the file."""
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    text = buf.getvalue()
    import yaml

    build_settings(yaml.safe_load(text) or {}, str(path), path.parent, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    from vq.core.settings import load_settings

    return load_settings(str(path))


def add_vault(path: Path, vault_id: str, root: str, include: tuple[str, ...] = (),
              exclude: tuple[str, ...] = (), kind: str = "notes") -> Settings:
    with editing(path):
        return _add_vault(path, vault_id, root, include, exclude, kind)


def _add_vault(path: Path, vault_id: str, root: str, include: tuple[str, ...],
               exclude: tuple[str, ...], kind: str) -> Settings:
    from ruamel.yaml.comments import CommentedMap

    doc = load_document(path)
    vaults = doc.get("vaults")
    if vaults is None:
        vaults = doc["vaults"] = CommentedMap()
    if vault_id in vaults:
        raise ConfigError(str(path), f"vaults.{vault_id}", "a vault with this id exists",
                          f"pick another id, or `vq vault remove {vault_id}` first")
    if not Path(root).expanduser().is_dir():
        raise VqError(f"vault path {root} is not a folder", "give an existing folder")
    spec = CommentedMap(path=str(Path(root).expanduser().resolve()), kind=kind)
    if include:
        spec["include"] = list(include)
    if exclude:
        spec["exclude"] = list(exclude)
    vaults[vault_id] = spec
    return save_document(path, doc)


def remove_vault(path: Path, vault_id: str) -> Settings:
    with editing(path):
        return _remove_vault(path, vault_id)


def _remove_vault(path: Path, vault_id: str) -> Settings:
    doc = load_document(path)
    vaults = doc.get("vaults") or {}
    if vault_id not in vaults:
        raise ConfigError(str(path), f"vaults.{vault_id}", "no such vault",
                          "see `vq vault list`")
    del vaults[vault_id]
    return save_document(path, doc)


def edit_vault(path: Path, vault_id: str, root: str, include: tuple[str, ...] = (),
               exclude: tuple[str, ...] = (), kind: str = "notes") -> Settings:
    """Replace a vault's path, kind and globs; its other keys (gitignore) and comments stay."""
    with editing(path):
        return _edit_vault(path, vault_id, root, include, exclude, kind)


def _edit_vault(path: Path, vault_id: str, root: str, include: tuple[str, ...],
                exclude: tuple[str, ...], kind: str) -> Settings:
    from ruamel.yaml.comments import CommentedMap

    doc = load_document(path)
    vaults = doc.get("vaults") or {}
    if vault_id not in vaults:
        raise ConfigError(str(path), f"vaults.{vault_id}", "no such vault",
                          "see `vq vault list`")
    if not Path(root).expanduser().is_dir():
        raise VqError(f"vault path {root} is not a folder", "give an existing folder")
    spec = vaults[vault_id]
    if not isinstance(spec, dict):  # the short form `id: path`
        spec = vaults[vault_id] = CommentedMap()
    spec["path"] = str(Path(root).expanduser().resolve())
    spec["kind"] = kind
    for name, globs in (("include", include), ("exclude", exclude)):
        if globs:
            spec[name] = list(globs)
        elif name in spec:
            del spec[name]
    return save_document(path, doc)
