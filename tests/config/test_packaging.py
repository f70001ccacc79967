"""vq installs one import name, and its command table points at real commands.

The repository keeps ``core/``, ``indexer/``, ``query/`` and ``jobs/`` at the top;
pyproject maps them beneath ``vq``. A folder added without a pyproject entry
would be missing from the wheel, so the list is checked against the tree.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest
import tomllib

from vq.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_folders() -> set[str]:
    """Every folder with an ``__init__.py`` under a mapped root, as a dotted vq name."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    found = set()
    for name, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    return found


def test_packages_list_matches_the_folders() -> None:
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    assert listed == _package_folders()
    assert all(name == "vq" or name.startswith("vq.") for name in listed)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_lazy_command_resolves(name: str) -> None:
    module, attr = COMMANDS[name][0].split(":")
    command = getattr(importlib.import_module(module), attr)
    assert isinstance(command, click.Command)


def test_bare_folder_names_are_not_the_installed_packages() -> None:
    """``vq.core`` is what the code imports; a bare ``core`` is nobody's business."""
    import vq.core.settings as settings

    assert settings.__name__ == "vq.core.settings"
    assert Path(settings.__file__).parent == ROOT / "core"


@pytest.mark.slow
def test_wheel_has_only_the_vq_top_level(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next(tmp_path.glob("vq-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"vq"}
    assert "vq/jobs/runner.py" in names and "vq/indexer/handlers/markdown.py" in names
