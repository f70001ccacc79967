"""Where vq keeps its files when the config does not say.

XDG locations on every platform (``~/.config/vq``, ``~/.local/share/vq``), so
cron, systemd and an interactive shell of the same user agree.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

PROJECT_CONFIG = ".vq.yaml"
UNIT_CONFIG_LINE = "# vq-config: "  # a `vq jobs systemd` unit names the config it runs
PRIVATE_UMASK = 0o077  # the index holds the text of mode-600 notes


@contextlib.contextmanager
def owner_only() -> Iterator[None]:
    """Everything created inside (tables, extract cache, ONNX export, logs) is
    readable by this user only; the caller's umask comes back after. The `vq`
    command sets the same umask for its whole process (``vq.cli.main``)."""
    old = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(old)


def make_private_dir(path: str | Path) -> None:
    """``mkdir -p`` whose last folder is owner-only even under a lax umask."""
    os.makedirs(path, mode=0o700, exist_ok=True)


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(base) / "vq"


def user_config_file() -> Path:
    return user_config_dir() / "config.yaml"


def user_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "vq"


def find_project_config(start: Path) -> Path | None:
    """The nearest ``.vq.yaml`` in ``start`` or its parents, as git finds ``.git``."""
    for folder in (start, *start.parents):
        candidate = folder / PROJECT_CONFIG
        if candidate.is_file():
            return candidate
    return None


def is_uri(location: str) -> bool:
    """True for object-store locations such as ``s3://bucket/prefix``."""
    return "://" in location
