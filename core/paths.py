"""Where vq keeps its files when the config does not say.

XDG locations on every platform (``~/.config/vq``, ``~/.local/share/vq``), so
cron, systemd and an interactive shell of the same user agree.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_CONFIG = ".vq.yaml"


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
