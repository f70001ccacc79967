"""Shared fixtures: every test gets its own config and index dirs under tmp_path.

The real model loads once per session (``encoder``) and is handed to in-process
builds; searches reuse ``vq.query.encoders``' per-process cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def private_runtime(prefix: str):
    """A private socket folder (``XDG_RUNTIME_DIR``) for the block, then the old one back.
    Short, as a socket path must fit in ~100 bytes; mkdtemp makes it 0700, as
    ``runtime_dir`` requires."""
    folder = tempfile.mkdtemp(prefix=prefix)
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = folder
    try:
        yield folder
    finally:
        if saved is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def private_runtime_dir():
    """The suite's own socket folder: the resident service is one per user, so without
    this a search in a test would reach the user's running service (say, the one
    `make demo` started) or another checkout's test run. A module that runs its own
    service swaps in its own folder."""
    with private_runtime("vqs") as folder:
        yield folder


@pytest.fixture(autouse=True)
def env_setup(tmp_path, monkeypatch):
    """No test reads the user's real config or index, or reaches for a model hub."""
    for name in list(os.environ):
        if name.startswith("VQ_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("CI", raising=False)
    # No test leaves a detached `vq serve` behind; the service tests turn it back on.
    monkeypatch.setenv("VQ_SEARCH__AUTOSTART", "false")
    # Builds skip the ONNX export (seconds each); tests/index/test_onnx_export.py turns it on.
    monkeypatch.setenv("VQ_SERVE__ONNX_EXPORT", "false")
    # `vq serve` and `vq schedule` watch no vault unless a test asks (tests/jobs/test_watch.py):
    # a watcher's builds would take the lock from under the tests' own builds.
    monkeypatch.setenv("VQ_WATCH", "false")
    monkeypatch.chdir(tmp_path)


NOTES = {
    "deploy.md": """\
        ---
        title: Deploying the service
        tags: [ops, release]
        date: 2026-11-20
        ---
        # Deploying the service

        ## Rollout

        We roll out with a canary: five percent of traffic first, then the rest
        after twenty minutes without alerts.

        ## Rollback

        To undo a bad release, redeploy the previous image tag. The database
        migrations are backward compatible for one release.
        """,
    "adr/0001-storage.md": """\
        # ADR 1: Storage engine

        ## Decision

        We keep the search index in LanceDB, embedded, one directory per index.

        ## Consequences

        Readers never lock; one writer at a time holds a file lock.
        """,
    "cooking.md": """\
        # Bread

        Knead the dough for ten minutes, then let it rise until doubled in size.
        The oven must be very hot: bake the loaf at 250 degrees for half an hour.
        """,
    "errors.md": """\
        # Error codes

        ## E4711

        The code E4711 means the upstream quota was exhausted for the day.
        """,
}

CODE = {
    "src/retry.py": '''\
        """Small helpers for talking to flaky services."""

        import time


        def backoff_delays(attempts, base=0.5):
            """Yield exponentially growing sleep times between retries."""
            for n in range(attempts):
                yield base * 2 ** n


        class Client:
            """An HTTP client that retries."""

            def get(self, url):
                return url
        ''',
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def vault(tmp_path) -> Path:
    """A small real notes tree."""
    root = tmp_path / "notes"
    write_tree(root, NOTES)
    return root


@pytest.fixture
def code_vault(tmp_path) -> Path:
    root = tmp_path / "code"
    write_tree(root, CODE)
    return root


def write_config(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def build_and_search(tmp_path: Path, build: Callable, cli: Callable, files: dict[str, str],
                     kind: str, *search_args: str) -> list[dict]:
    """One vault of ``kind`` holding ``files``, built for real; the JSON hits of
    ``vq search SEARCH_ARGS``: how a reader's format test ends in a real search."""
    import json

    from vq.core.settings import load_settings

    write_tree(tmp_path / "vault", files)
    cfg = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"v": {"path": str(tmp_path / "vault"), "kind": kind}}})
    assert build(load_settings(str(cfg))).outcome == "ok"
    return json.loads(cli("--config", cfg, "search", "--json", *search_args).stdout)


@pytest.fixture
def config_file(tmp_path, vault) -> Path:
    return write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"notes": {"path": str(vault), "kind": "notes"}},
    })


@pytest.fixture
def settings(config_file):
    from vq.core.settings import load_settings

    return load_settings(str(config_file))


TEST_MODEL = "vq-test/hash-384"


@pytest.fixture
def test_models(monkeypatch):
    """Allow the deterministic test encoder (``model: vq-test/hash-384``) in this test and
    its subprocesses: for tests of locking, crashes, storage and scheduling, where the
    vectors' meaning does not matter and a model load per subprocess would."""
    monkeypatch.setenv("VQ_TEST_MODELS", "1")
    return TEST_MODEL


@pytest.fixture(scope="session")
def encoder():
    """The real bundled MiniLM, loaded once for the whole session."""
    from vq.query.encoders import query_encoder

    return query_encoder("all-MiniLM-L6-v2", "cpu")


@pytest.fixture
def build(encoder):
    """In-process locked build with the session's model: ``build(settings, **kw)``."""
    from vq.jobs.runner import locked_build

    def run(settings, **kwargs):
        return locked_build(settings, encoder=encoder, **kwargs)

    return run


# A template older than this is rebuilt, never copied: its table versions must stay well
# inside LanceDB's cleanup grace (``maintenance.cleanup_grace_minutes``, 10 by default),
# or a test's own build could delete the version a reader in that test still has open.
TEMPLATE_MAX_AGE = 120.0


class IndexTemplates:
    """Indexes tests have built beside their files (``built``, ``one_note_index``), kept
    by everything a build reads: the files under the test's ``tmp_path`` (config and
    vaults, bytes and names, the config's ``tmp_path`` spelled as a placeholder) and the
    ``VQ_*`` environment. A later test with the same key gets a copy of the index, with
    its files given the template's mtimes, so the index and manifest are exactly what its
    own build would have left (a copy costs milliseconds, a build seconds)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, tuple[float, Path, dict[str, int]]] = {}

    @staticmethod
    def key(tmp_path: Path) -> tuple[str, dict[str, int]] | None:
        """The key and each file's mtime; None when something cannot be read."""
        parts, mtimes = [], {}
        try:
            for path in sorted(tmp_path.rglob("*")):
                rel = path.relative_to(tmp_path).as_posix()
                if path.is_symlink():
                    parts.append(f"{rel} -> {os.readlink(path)}")
                elif path.is_file():
                    body = path.read_bytes().replace(str(tmp_path).encode(), b"<tmp>")
                    parts.append(f"{rel}\0{body!r}")
                    mtimes[rel] = path.stat().st_mtime_ns
                else:
                    parts.append(f"{rel}/")
        except OSError:
            return None
        parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("VQ_"))
        return "\n".join(parts), mtimes

    def copy(self, key: str, tmp_path: Path, index: Path) -> bool:
        """Give ``tmp_path`` the template's index, and its files the template's mtimes (the
        manifest compares them); False when there is no young template for ``key``."""
        made = self.made.get(key)
        if made is None or time.monotonic() - made[0] > TEMPLATE_MAX_AGE:
            return False
        for rel, mtime_ns in made[2].items():
            os.utime(tmp_path / rel, ns=(mtime_ns, mtime_ns))
        shutil.copytree(made[1], index)  # copy2: the tables' files keep their times
        return True

    def keep(self, key: str, mtimes: dict[str, int], index: Path) -> None:
        folder = self.root / f"t{time.monotonic_ns()}"
        shutil.copytree(index, folder)
        self.made[key] = (time.monotonic(), folder, mtimes)

    def build_or_copy(self, tmp_path: Path, index: Path, make: Callable[[], None]) -> None:
        """Give ``index`` (a folder directly in ``tmp_path``) what ``make()`` builds there:
        a young template's copy when one has this key, else ``make()``'s own, kept."""
        found = None if index.exists() or index.parent != tmp_path else self.key(tmp_path)
        if found is not None and self.copy(found[0], tmp_path, index):
            return
        make()
        if found is not None:
            self.keep(*found, index)


@pytest.fixture(scope="session")
def index_templates(tmp_path_factory) -> IndexTemplates:
    return IndexTemplates(tmp_path_factory.mktemp("index-templates"))


@pytest.fixture
def built(settings, build, tmp_path, index_templates):
    """Settings whose index has been built once. The first test to ask builds it; later
    tests with the same files and ``VQ_*`` environment get a copy (``IndexTemplates``)."""

    def make() -> None:
        summary = build(settings)
        assert summary.outcome == "ok"

    index_templates.build_or_copy(tmp_path, Path(settings.index_dir), make)
    return settings


@pytest.fixture
def cli():
    """Invoke the real `vq` click command in-process: ``cli("--config", f, "status")``."""
    from vq.cli import cli as root

    runner = CliRunner()

    def invoke(*args, **kwargs):
        return runner.invoke(root, [str(a) for a in args], catch_exceptions=False, **kwargs)

    return invoke


def run_vq(*args, env=None, timeout=300, **kwargs) -> subprocess.CompletedProcess:
    """`vq` in a fresh interpreter, as cron or a shell would run it."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "vq", *map(str, args)],
                          capture_output=True, text=True, env=full_env, timeout=timeout,
                          cwd=kwargs.pop("cwd", None), **kwargs)


def one_note_index(tmp_path: Path, note: str, vault: str = "v",
                   templates: IndexTemplates | None = None) -> Path:
    """A vault of one note (``a.md``) built by a real `vq build` with the test encoder
    (the caller asks for the ``test_models`` fixture); returns the config path. With
    ``templates`` (``index_templates``), a later test's same index is a copy."""
    root = tmp_path / vault
    root.mkdir()
    (root / "a.md").write_text(f"# A\n\n{note}\n")
    path = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                              "model": TEST_MODEL,
                                              "vaults": {vault: {"path": str(root)}}})

    def make() -> None:
        assert run_vq("--config", path, "build").returncode == 0

    if templates is None:
        make()
    else:
        templates.build_or_copy(tmp_path, tmp_path / "index", make)
    return path


def wait_for(predicate, timeout=180.0):
    """Poll ``predicate`` until it returns something truthy (returned) or the deadline
    passes (an AssertionError): tests wait for events this way, never by sleeping."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)  # polling interval, bounded by the deadline
    raise AssertionError("condition not met before the deadline")


_HOLD = ("import sys, pathlib; from filelock import FileLock; "
         "from vq.core.lock import write_holder; p = pathlib.Path(sys.argv[1]); "
         "l = FileLock(str(p)); l.acquire(); write_holder(p); print('held', flush=True); "
         "sys.stdin.read()")


@contextmanager
def lock_held_elsewhere(lock_path: Path):
    """Another process holds the build lock (and says so in the holder record), as a
    running build does, until the block ends; yields its pid."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with subprocess.Popen([sys.executable, "-c", _HOLD, str(lock_path)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "held"
            yield holder.pid
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
