"""Folders a notes or docs app keeps among the pages, which `vq init` (and `vq vault add`)
leave out of the vaults.

* **Obsidian** (a ``.obsidian/`` folder at the root): the templates folder that its core
  Templates plugin (``.obsidian/templates.json``: ``folder``) or the Templater plugin
  (``.obsidian/plugins/templater-obsidian/data.json``: ``templates_folder``) names.
  Templates are pages of placeholders (``{{date}}``, ``<% tp.file.title %>``) that match
  every query about a daily note or a meeting and answer none.
* **Logseq** (``logseq/config.edn``): the ``logseq/`` folder, the app's settings and its
  ``bak/`` and ``version-files/`` copies of pages, which would answer every query twice.
* **Docusaurus** (``versions.json`` beside ``versioned_docs/``, at the root or in a folder
  of it such as ``website/``): ``versioned_docs/``, a copy of the docs for each released
  version (``docusaurus docs:version`` writes it). Jest keeps three beside ``docs/``, so
  every hit about an API came four times.
* **Hugo** (a ``hugo.toml``, or a ``config.toml`` beside ``content/``, at the root or one
  folder down): ``archetypes/``, the templates ``hugo new`` fills in (front matter of
  placeholders: ``title: "{{ replace .File.ContentBaseName "-" " " | title }}"``).

The app's own settings files are read (JSON, bounded); a missing, unreadable or odd one
proposes nothing. ``.obsidian/`` itself is a dot folder, which no walk enters.
"""

from __future__ import annotations

import itertools
import json
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

MAX_SETTINGS_BYTES = 1 << 20  # a plugin's settings file; more is not settings
MAX_FOLDERS = 200  # folders of the root looked into for a docs site (a bounded listing)
_TEMPLATE_SETTINGS = ((".obsidian/templates.json", "folder"),
                      (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"))


@dataclass(frozen=True)
class AppFolder:
    """A folder to leave out (posix, relative to the root) and why, for the plan's note."""

    folder: str
    why: str


def notes_app(root: Path) -> bool:
    """``root`` is an Obsidian vault or a Logseq graph: notes a person writes."""
    return (root / ".obsidian").is_dir() or (root / "logseq" / "config.edn").is_file()


def app_folders(root: Path) -> tuple[str, list[AppFolder]]:
    """(the notes app that keeps ``root``, or "", the folders of it to leave out)."""
    if (root / "logseq" / "config.edn").is_file():
        return "Logseq graph", [AppFolder("logseq", "the app's settings and backup copies "
                                                    "of pages")]
    if not (root / ".obsidian").is_dir():
        return _docs_sites(root)
    found: dict[str, AppFolder] = {}
    for settings, key in _TEMPLATE_SETTINGS:
        folder = _folder_setting(root, settings, key)
        if folder and (root / folder).is_dir():
            found.setdefault(folder, AppFolder(folder, "templates: placeholders, not notes"))
    return "Obsidian vault", list(found.values())


def _docs_sites(root: Path) -> tuple[str, list[AppFolder]]:
    """A Docusaurus site's ``versioned_docs/`` and a Hugo site's ``archetypes/``, at the
    root or one folder down."""
    try:
        with os.scandir(root) as listing:
            sites = [root] + [Path(e.path) for e in itertools.islice(listing, MAX_FOLDERS)
                              if e.is_dir(follow_symlinks=False) and e.name[:1] != "."]
    except OSError:
        return "", []
    found, apps = [], set()
    for site in sites:
        versions = site / "versioned_docs"
        if (site / "versions.json").is_file() and versions.is_dir():
            count = sum(1 for v in itertools.islice(versions.iterdir(), MAX_FOLDERS)
                        if v.name.startswith("version-"))
            found.append(AppFolder(versions.relative_to(root).as_posix(),
                                   f"{count} released versions, each a copy of the docs"))
            apps.add("Docusaurus site")
        if _hugo_site(site):
            found.append(AppFolder((site / "archetypes").relative_to(root).as_posix(),
                                   "templates `hugo new` fills in: placeholders, not pages"))
            apps.add("Hugo site")
    return " and ".join(sorted(apps)), found


def _hugo_site(site: Path) -> bool:
    """A Hugo site with archetypes: its own config file, or a generic one beside
    ``content/``."""
    return (site / "archetypes").is_dir() and (
        any((site / f"hugo.{ext}").is_file() for ext in ("toml", "yaml", "json"))
        or (site / "content").is_dir() and any((site / f"config.{ext}").is_file()
                                               for ext in ("toml", "yaml", "json")))


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
