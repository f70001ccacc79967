"""Folders a notes app keeps among the notes, which `vq init` leaves out of the vaults.

* **Obsidian** (a ``.obsidian/`` folder at the root): the templates folder that its core
  Templates plugin (``.obsidian/templates.json``: ``folder``) or the Templater plugin
  (``.obsidian/plugins/templater-obsidian/data.json``: ``templates_folder``) names.
  Templates are pages of placeholders (``{{date}}``, ``<% tp.file.title %>``) that match
  every query about a daily note or a meeting and answer none.
* **Logseq** (``logseq/config.edn``): the ``logseq/`` folder, the app's settings and its
  ``bak/`` and ``version-files/`` copies of pages, which would answer every query twice.

The app's own settings files are read (JSON, bounded); a missing, unreadable or odd one
proposes nothing. ``.obsidian/`` itself is a dot folder, which no walk enters.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from pathlib import Path

MAX_SETTINGS_BYTES = 1 << 20  # a plugin's settings file; more is not settings
_TEMPLATE_SETTINGS = ((".obsidian/templates.json", "folder"),
                      (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"))


@dataclass(frozen=True)
class AppFolder:
    """A folder to leave out (posix, relative to the root) and why, for the plan's note."""

    folder: str
    why: str


def app_folders(root: Path) -> tuple[str, list[AppFolder]]:
    """(the notes app that keeps ``root``, or "", the folders of it to leave out)."""
    if (root / "logseq" / "config.edn").is_file():
        return "Logseq graph", [AppFolder("logseq", "the app's settings and backup copies "
                                                    "of pages")]
    if not (root / ".obsidian").is_dir():
        return "", []
    found: dict[str, AppFolder] = {}
    for settings, key in _TEMPLATE_SETTINGS:
        folder = _folder_setting(root, settings, key)
        if folder and (root / folder).is_dir():
            found.setdefault(folder, AppFolder(folder, "templates: placeholders, not notes"))
    return "Obsidian vault", list(found.values())


def _folder_setting(root: Path, settings: str, key: str) -> str:
    """The folder a settings file names under ``key``, normalised inside ``root``; ""
    when the file is missing, too big, not JSON, or names a place outside the vault."""
    try:
        with open(root / settings, "rb") as f:
            raw = f.read(MAX_SETTINGS_BYTES + 1)
        value = json.loads(raw) if len(raw) <= MAX_SETTINGS_BYTES else None
    except (OSError, ValueError):
        return ""
    name = value.get(key) if isinstance(value, dict) else None
    if not isinstance(name, str) or not name.strip():
        return ""
    folder = posixpath.normpath(name.strip().replace("\\", "/").strip("/"))
    return "" if folder in (".", "") or folder.startswith("..") else folder
