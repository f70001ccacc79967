"""Doctor's checks of who can read the index and who steers vq.

The index holds the text of every note, mode-600 ones included, so it must be
readable by its owner only; a project config that defines hooks runs commands,
so it must have been trusted with `vq hooks allow`.
"""

from __future__ import annotations

import os
import stat

from vq.core import paths
from vq.core.settings import Settings
from vq.query.doctor.checks import OK, SKIP, WARN, Check


def privacy_check(settings: Settings) -> Check:
    """``index_dir`` owner-only (vq creates it 0700 and writes with umask 077)."""
    name = "index private"
    if paths.is_uri(settings.index_dir):
        return Check(name, SKIP, "object storage: access is the bucket's policy")
    try:
        mode = os.stat(settings.index_dir).st_mode
    except OSError:
        return Check(name, OK, "not created yet; vq creates it owner-only (umask 077)")
    shown = stat.filemode(mode)
    if mode & 0o077:
        return Check(name, WARN, f"{settings.index_dir} is open to other users ({shown}): the "
                     "text of every indexed note can be read from it",
                     f"chmod -R go-rwx {settings.index_dir}")
    return Check(name, OK, f"{settings.index_dir} is owner-only ({shown}); everything vq "
                 "writes is created owner-only (umask 077)")


def hooks_trust_check(settings: Settings) -> Check:
    """Hooks that a build would refuse to run, and why."""
    name = "hooks trusted"
    if not settings.hooks:
        return Check(name, OK, "no hooks configured")
    from vq.core.errors import VqError
    from vq.core.trust import require_trusted

    try:
        require_trusted(settings)
    except VqError as exc:
        return Check(name, WARN, f"{exc.message}: builds refuse to run them", exc.fix or "")
    return Check(name, OK, f"{len(settings.hooks)} hook(s) from a config you own and trust")
