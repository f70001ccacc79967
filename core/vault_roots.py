"""Vault roots too broad to index by accident: the file system root and the home folder.

A vault at ``/`` or ``~`` walks everything the user owns (caches, mail, other
projects' indexes) and a first build can take hours; it is almost always a typo
(``vq vault add notes ~`` for ``~/notes``). `vq vault add` warns and asks for
``--force``; a config written by hand is left alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from vq.core.errors import VqError


def broad_root(root: str | Path) -> str | None:
    """What is wrong with this root ("the file system root", "your home folder"), or None."""
    real = os.path.realpath(os.path.expanduser(str(root)))
    if real == os.path.realpath(os.sep) or Path(real).parent == Path(real):
        return "the file system root"
    if real == os.path.realpath(os.path.expanduser("~")):
        return "your home folder"
    return None


def check_vault_root(root: str | Path, force: bool = False) -> str | None:
    """Refuse a broad root unless ``force``; with it, return the warning to print."""
    what = broad_root(root)
    if what is None:
        return None
    message = (f"vault path {root} is {what}: every file under it would be walked and "
               "indexed")
    if not force:
        raise VqError(message, "add the folder that holds your notes (e.g. ~/notes), or pass "
                      "--force if you really mean the whole folder")
    return message
