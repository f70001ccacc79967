"""Whose files vq obeys: configs and hook programs must be yours, and a project config
that runs commands must be trusted once.

vq prefers a ``.vq.yaml`` in any parent folder, so a file another user planted at
``/tmp/.vq.yaml`` made `vq build` run its hooks as whoever built under ``/tmp``,
and ``cd cloned-repo && vq build`` ran a stranger's commands. So:

* a config file or hook program owned by another user (root excepted), or
  writable by group or others, is refused with the reason and the fix
  (``owner_problem``); a group-writable file whose group is the user's own
  private group (the ``umask 002`` convention) is the user's alone and passes;
* a project config found by the upward search that defines hooks runs them only
  once trusted, as direnv's ``allow``: `vq trust` records its real path and the
  hash of its content in the user's data folder; any edit needs a new `vq trust`.
"""

from __future__ import annotations

import grp
import hashlib
import json
import os
import pwd
import shlex
import shutil
import stat
from pathlib import Path
from typing import Any

from vq.core import paths
from vq.core.errors import VqError

TRUST_FILE = "trusted-configs.json"


def owner_problem(st: os.stat_result) -> str:
    """Why a file with this stat may not steer vq ("" when it is this user's alone)."""
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        return f"anyone can write to it (mode {stat.filemode(st.st_mode)})"
    if st.st_mode & stat.S_IWGRP and not _private_group(st.st_gid, me):
        return f"its group can write to it (mode {stat.filemode(st.st_mode)})"
    return ""


def _private_group(gid: int, uid: int) -> bool:
    """The user's private group (named after them, theirs alone): ``umask 002`` systems."""
    try:
        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except KeyError:
        return False
    return (gid == user.pw_gid and group.gr_name == user.pw_name
            and set(group.gr_mem) <= {user.pw_name})


def fix_for(path: Path | str, problem: str) -> str:
    if "another user" in problem:
        return (f"do not use a file someone else controls: delete or move {path}, or "
                "point --config/VQ_CONFIG at your own")
    return f"chmod go-w {path}"


def _store() -> Path:
    return paths.user_data_dir() / TRUST_FILE


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _trusted() -> dict[str, str]:
    try:
        data = json.loads(_store().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_trusted(path: Path) -> bool:
    """True when `vq trust` recorded this file's real path with its current content."""
    try:
        return _trusted().get(os.path.realpath(path)) == digest(path)
    except OSError:
        return False


def trust(path: Path) -> str:
    """Record ``path`` (real path + content hash) as trusted; returns the hash."""
    entries = _trusted()
    value = digest(path)
    entries[os.path.realpath(path)] = value
    store = _store()
    paths.make_private_dir(store.parent)
    tmp = store.with_name(f"{store.name}.{os.getpid()}.tmp")
    with paths.owner_only():
        tmp.write_text(json.dumps(entries, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, store)
    return value


def require_trusted(settings: Any) -> None:
    """Refuse to run any hook from an untrusted project config, or whose program (or
    script argument) another user owns or can write. Builds and `vq hooks check`
    call it before any hook runs; doctor reports what it says."""
    if not settings.hooks:
        return
    if settings.hooks_need_trust:
        where = settings.hooks_need_trust
        raise VqError(f"{where} defines hooks (commands vq would run as you) and was found "
                      "by searching parent folders; it is not trusted yet",
                      f"read its hooks:, then run `vq hooks allow {where}`")
    for command in settings.hooks.values():
        for program in _programs(command):
            problem = owner_problem(os.stat(program))
            if problem:
                raise VqError(f"hook `{command}` refused: {program}: {problem}",
                              fix_for(program, problem))


def _programs(command: str) -> list[str]:
    """The hook's program (found on PATH) and every argument naming an existing file."""
    argv = shlex.split(command)
    found = [shutil.which(argv[0]) or ""] if argv else []
    found += [a for a in argv[1:] if "{path}" not in a and os.path.isfile(a)]
    return [p for p in found if p and os.path.exists(p)]
