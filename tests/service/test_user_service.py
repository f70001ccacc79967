"""Issue 38, item 2: one resident service per user, however many projects search.

Two projects (two configs, two index dirs, two vaults, real `vq build`s with the
test encoder) are searched through one `vq serve`: one pid, one model load, each
answered from its own index; an idle slot is evicted and reopened; `--list`,
`vq status` and `vq doctor` say what it holds and whether it watches it; an edit in
the second project's vault becomes searchable through the service without a build.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import one_note_index, run_vq, wait_for
from vq.core import runtime
from vq.core.settings import load_settings
from vq.query.service import client

TEST_MODEL = "vq-test/hash-384"
LEXICAL = {"method": "lexical", "limit": 5, "filters": {}}


@pytest.fixture
def own_runtime(monkeypatch):
    """A short private socket folder for this test: its service is this user's."""
    folder = tempfile.mkdtemp(prefix="vqu")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def two(tmp_path, test_models, own_runtime):
    """Two built projects: (config, index_dir) of "walrus" and of "narwhal"."""
    out = []
    for name, note in (("a", "the walrus note"), ("b", "the narwhal note")):
        (tmp_path / name).mkdir()
        cfg = one_note_index(tmp_path / name, note)
        out.append((cfg, str(tmp_path / name / "index")))
    return out


@contextlib.contextmanager
def serving(cfg, log: Path, *args: str, env=None):
    """`vq serve` (or `vq <args>`) for ``cfg``'s project until the block ends; its
    stderr goes to ``log`` (a pipe nobody reads could fill and block it)."""
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(cfg),
                                 *(args or ("serve",))], stderr=err,
                                env={**os.environ, **(env or {})})
    try:
        wait_for(lambda: proc.poll() is not None or (client.info() or {}).get("indexes"))
        assert proc.poll() is None, log.read_text()
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)


def lexical(cfg, text: str) -> dict | None:
    """A whole lexical search of ``cfg``'s project through the user's service."""
    return client.search(load_settings(str(cfg)), {}, {"text": text, **LEXICAL},
                         {"json": True})


def slot_of(index_dir: str) -> dict | None:
    info = client.info()
    return client.held(info, index_dir) if info else None


def test_two_projects_share_one_service_and_one_model_load(two, tmp_path):
    (cfg_a, index_a), (cfg_b, index_b) = two
    with serving(cfg_a, tmp_path / "serve.log", env={"VQ_WATCH": "true"}) as proc:
        for cfg, word in ((cfg_a, "walrus"), (cfg_b, "narwhal")):
            out = run_vq("--config", cfg, "search", word, "--json", "--explain")
            assert out.returncode == 0, out.stderr
            data = json.loads(out.stdout)
            assert data["explain"]["encoder"] == f"service pid {proc.pid}"
            assert data["explain"]["method"] == "hybrid"
            assert word in data["hits"][0]["snippet"]
        # each index answers from itself: the other project's word is not found
        assert lexical(cfg_a, "walrus")["exit"] == 0 and lexical(cfg_b, "walrus")["exit"] == 1
        assert lexical(cfg_b, "narwhal")["exit"] == 0 and lexical(cfg_a, "narwhal")["exit"] == 1
        info = client.info()
        assert info["pid"] == proc.pid
        assert [(m["model"], m["loads"]) for m in info["models"]] == [(TEST_MODEL, 1)]
        assert sorted(s["index_dir"] for s in info["indexes"]) == sorted([index_a, index_b])

        listed = json.loads(run_vq("serve", "--list", "--json").stdout)
        assert listed["running"] and listed["pid"] == proc.pid
        slots = {s["index_dir"]: s for s in listed["indexes"]}
        assert {slots[i]["watch"]["state"] for i in (index_a, index_b)} == {"watching"}
        assert all(slots[i]["rows"] == 1 and slots[i]["model"] == TEST_MODEL
                   for i in (index_a, index_b))
        text = run_vq("serve", "--list").stdout
        assert index_a in text and index_b in text and text.count("watch: watching") == 2

        status = json.loads(run_vq("--config", cfg_b, "status", "--json").stdout)["service"]
        assert status["pid"] == proc.pid and status["slot"]["index_dir"] == index_b
        assert "holds this index" in run_vq("--config", cfg_b, "status").stdout
        from vq.query.doctor.checks import service_check

        check = service_check(load_settings(str(cfg_b)))
        assert "holds this index" in check.detail and "watch: watching" in check.detail


def test_an_edit_in_the_second_project_is_searchable_through_the_service(two, tmp_path):
    """No build command: the service watches the vaults of each index it opened, and
    reloads that slot's snapshot when the watcher's batch commits."""
    (cfg_a, _), (cfg_b, index_b) = two
    env = {"VQ_WATCH": "true", "VQ_WATCH_DEBOUNCE_SECONDS": "0.2"}
    with serving(cfg_a, tmp_path / "serve.log", env=env) as proc:
        assert lexical(cfg_b, "narwhal")["exit"] == 0  # opens B's slot: watching starts
        wait_for(lambda: (slot_of(index_b) or {}).get("watch", {}).get("pid") == proc.pid)
        assert lexical(cfg_b, "quokka")["exit"] == 1
        target, written = tmp_path / "b" / "v" / "new.md", [0.0]

        def searchable() -> dict | None:
            if time.monotonic() - written[0] > 2.0:  # an event before the watch is live is
                target.write_text(f"# New\n\nA quokka crossed ({time.monotonic()}).\n")
                written[0] = time.monotonic()  # lost: write again, as tests/jobs do
            reply = lexical(cfg_b, "quokka")
            return reply if reply and reply["exit"] == 0 else None

        found = wait_for(searchable)
        assert json.loads(found["stdout"])[0]["path"] == "new.md"
        assert lexical(cfg_a, "quokka")["exit"] == 1  # project A's index is untouched


def test_an_idle_slot_is_evicted_and_reopened_by_the_next_search(two, tmp_path):
    (cfg_a, _), (cfg_b, index_b) = two
    env = {"VQ_SERVE__SLOT_IDLE_MINUTES": "0.001"}
    with serving(cfg_a, tmp_path / "serve.log", env=env):
        assert lexical(cfg_b, "narwhal")["exit"] == 0
        evicted = wait_for(lambda: (slot_of(index_b) or {"loaded": True})["loaded"] is False
                           and slot_of(index_b))
        assert (evicted["opens"], evicted["searches"]) == (1, 1)
        assert evicted["watch"]["state"] == "off"  # `watch: false` (the tests' default)
        again = lexical(cfg_b, "narwhal")
        assert again["exit"] == 0 and "narwhal" in again["stdout"]
        slot = slot_of(index_b)
        assert (slot["opens"], slot["searches"]) == (2, 2)


def _services() -> list[int]:
    """Pids of autostarted `vq ... serve --lock-fd N` processes (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and b"--lock-fd" in argv:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="counts processes in /proc")
def test_the_first_search_starts_it_and_a_second_project_reuses_it(two, own_runtime):
    (cfg_a, index_a), (cfg_b, index_b) = two
    before = set(_services())  # another test session's services are not ours
    env = {"VQ_SEARCH__AUTOSTART": "true"}
    try:
        assert run_vq("--config", cfg_a, "search", "-m", "lexical", "walrus",
                      env=env).returncode == 0
        pid = wait_for(lambda: (client.info() or {}).get("pid"))
        out = run_vq("--config", cfg_b, "search", "narwhal", "--json", "--explain", env=env)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["explain"]["encoder"] == f"service pid {pid}"
        assert [p for p in _services() if p not in before] == [pid]
        info = client.info()
        assert sorted(s["index_dir"] for s in info["indexes"]) == sorted([index_a, index_b])
        stop = run_vq("serve", "--stop")
        assert f"stopped the vq service (pid {pid})" in stop.stderr
        assert client.info() is None and not runtime.is_running()
    finally:
        for pid in set(_services()) - before:
            os.kill(pid, signal.SIGTERM)


def test_schedule_hosts_the_service_only_when_none_runs(two, tmp_path):
    (cfg_a, index_a), (cfg_b, index_b) = two
    log = tmp_path / "schedule.log"
    with serving(cfg_b, tmp_path / "s1.err", "schedule", "--log-file", str(log)) as sched:
        assert client.info()["pid"] == sched.pid  # none ran: the scheduler hosts it
        assert lexical(cfg_a, "walrus")["exit"] == 0  # and it serves another project too
        assert slot_of(index_a) is not None
    with serving(cfg_a, tmp_path / "serve.err") as served:
        log.unlink()
        with open(tmp_path / "s2.err", "w") as err:
            sched = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(cfg_b),
                                      "schedule", "--log-file", str(log)], stderr=err)
        try:
            wait_for(lambda: log.exists() and "not serving searches" in log.read_text())
            assert f"a vq service (pid {served.pid}) already runs" in log.read_text()
            assert sched.poll() is None  # it schedules builds all the same
            assert client.info()["pid"] == served.pid
            assert lexical(cfg_b, "narwhal")["exit"] == 0
            assert slot_of(index_b) is not None  # answered by the one service
        finally:
            sched.send_signal(signal.SIGTERM)
            assert sched.wait(timeout=120) == 0


@pytest.mark.model
@pytest.mark.slow
def test_two_indexes_of_the_real_model_load_it_once(tmp_path, encoder, own_runtime,
                                                    monkeypatch):
    """Each index folder holds its own ONNX export of the model; the service loads one."""
    from tests.conftest import write_config, write_tree
    from vq.jobs.runner import locked_build

    monkeypatch.delenv("VQ_SERVE__ONNX_EXPORT")
    configs = []
    for name, note in (("a", "A walrus basks on the ice floe."),
                       ("b", "A narwhal dives under the pack ice.")):
        write_tree(tmp_path / name / "v", {"a.md": f"# {name}\n\n{note}\n"})
        cfg = write_config(tmp_path / name / "c.yaml", {
            "index_dir": str(tmp_path / name / "index"),
            "vaults": {"v": {"path": str(tmp_path / name / "v")}}})
        assert locked_build(load_settings(str(cfg)), encoder=encoder).query_onnx == "exported"
        configs.append(cfg)
    with serving(configs[0], tmp_path / "serve.log") as proc:
        for cfg, word in zip(configs, ("walrus", "narwhal"), strict=True):
            reply = client.search(load_settings(str(cfg)), {},
                                  {"text": f"{word} in the arctic", "method": "hybrid",
                                   "limit": 1, "filters": {}}, {"json": True, "explain": True})
            data = json.loads(reply["stdout"])
            assert data["explain"]["encoder"] == f"service pid {proc.pid}"
            assert word in data["hits"][0]["snippet"]
        models = client.info()["models"]
        assert [(m["encoder"], m["loads"]) for m in models] == [("onnx", 1)]
