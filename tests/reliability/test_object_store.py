"""The index on S3-compatible object storage: a real moto server on loopback.

One scheduled builder writes ``s3://bucket/index`` under a lock on its own
disk; readers in other processes search it without a lock. Credentials and
endpoint come from the ``AWS_*`` variables LanceDB reads itself, or from the
``storage_options`` config key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from filelock import FileLock

from tests.conftest import REPO, run_vq, write_config
from tests.reliability import harness, readers
from vq.core import store
from vq.core.errors import ConfigError
from vq.core.settings import load_settings
from vq.jobs.runner import Skipped, locked_build

SERVER = """
import sys
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer("127.0.0.1", 0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()  # runs until the test session closes our stdin (or dies)
"""


@pytest.fixture(scope="session")
def s3_endpoint():
    """A moto S3 server on a free loopback port, for the whole session."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    # `with`: its pipes are closed however this ends. An open stdout pipe was reported as
    # a ResourceWarning at the session's end, i.e. in whichever test ran last.
    with proc:
        line = proc.stdout.readline()
        if not line.strip().isdigit():
            proc.kill()
            pytest.fail(f"moto server did not start (exit {proc.wait()})")
        endpoint = f"http://127.0.0.1:{int(line)}"
        _wait_until_answering(endpoint)
        yield endpoint
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_until_answering(endpoint: str, timeout: float = 30) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(endpoint, timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise


AWS = {"AWS_ACCESS_KEY_ID": "vq-test", "AWS_SECRET_ACCESS_KEY": "vq-test-secret",
       "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
       "AWS_ALLOW_HTTP": "true", "AWS_EC2_METADATA_DISABLED": "true"}


def new_bucket(endpoint: str) -> str:
    import boto3

    name = f"vq-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=AWS["AWS_ACCESS_KEY_ID"],
                 aws_secret_access_key=AWS["AWS_SECRET_ACCESS_KEY"],
                 region_name="us-east-1").create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3_uri(s3_endpoint, monkeypatch):
    """A fresh bucket; this test (and its subprocesses) reach it through AWS_* variables."""
    for key, value in {**AWS, "AWS_ENDPOINT": s3_endpoint}.items():
        monkeypatch.setenv(key, value)
    return f"s3://{new_bucket(s3_endpoint)}/index"


@pytest.fixture
def s3_config(tmp_path, vault, s3_uri):
    return write_config(tmp_path / "vq.yaml", {
        "index_dir": s3_uri, "device": "cpu",
        "vaults": {"notes": {"path": str(vault), "kind": "notes"}},
    })


# --- settings: storage_options, the lock on local disk ----------------------------------


def test_storage_options_are_strings_with_env_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("VQ_TEST_SECRET", "s3cr3t")
    cfg = write_config(tmp_path / "c.yaml", {
        "index_dir": "s3://bucket/prefix",
        "storage_options": {"aws_secret_access_key": "${VQ_TEST_SECRET}",
                            "allow_http": True, "timeout": 30}})
    s = load_settings(str(cfg))
    assert s.index_dir == "s3://bucket/prefix"  # a URI is kept as written
    assert dict(s.storage_options) == {"aws_secret_access_key": "s3cr3t",
                                       "allow_http": "true", "timeout": "30"}
    assert s.sources["storage_options"].startswith("file ")


@pytest.mark.parametrize("value, key", [
    ("endpoint=x", "storage_options"),
    ({"aws_endpoint": ["a", "b"]}, "storage_options.aws_endpoint"),
])
def test_bad_storage_options_name_the_key(tmp_path, value, key):
    cfg = write_config(tmp_path / "c.yaml", {"storage_options": value})
    with pytest.raises(ConfigError) as err:
        load_settings(str(cfg))
    assert err.value.key == key


def test_build_lock_for_a_uri_lives_on_local_disk(tmp_path):
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": "s3://team-bucket/vq/index"})
    s = load_settings(str(cfg))
    assert s.build_lock.is_relative_to(tmp_path / "xdg-data")
    assert s.build_lock.name == "s3___team_bucket_vq_index.lock"
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": "s3://b/p", "lock_path": "my.lock"})
    assert load_settings(str(cfg)).build_lock == tmp_path / "my.lock"


def test_a_held_local_lock_skips_the_build(tmp_path, s3_config):
    settings = load_settings(str(s3_config))
    settings.build_lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(settings.build_lock), timeout=0):
        assert isinstance(locked_build(settings), Skipped)
    assert not store.exists(settings.index_dir)  # nothing was written to the bucket


# --- the store: storage_options reach LanceDB ------------------------------------------


def test_storage_options_from_config_reach_lancedb(tmp_path, s3_endpoint, monkeypatch):
    """No AWS_* variables at all: endpoint and keys come from the config file."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("VQ_TEST_KEY", AWS["AWS_SECRET_ACCESS_KEY"])
    uri = f"s3://{new_bucket(s3_endpoint)}/index"
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": uri, "storage_options": {
        "aws_endpoint": s3_endpoint, "allow_http": True, "aws_region": "us-east-1",
        "aws_access_key_id": AWS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": "${VQ_TEST_KEY}"}})
    s = load_settings(str(cfg))
    from vq.core.schema import IndexMeta

    index = store.create_index(s.index_dir, IndexMeta(model="m", dim=4),
                               storage_options=s.storage_options)
    assert index.chunks.count_rows() == 0
    assert store.exists(s.index_dir, s.storage_options)
    assert store.open_index(s.index_dir, s.storage_options).meta.dim == 4
    assert not (tmp_path / "s3:").exists()  # no local folder named after the URI


# --- builds and searches against the bucket --------------------------------------------


def chunk_paths(uri: str) -> list[str]:
    rows = store.open_index(uri).chunks.search().select(["path"]).limit(None).to_arrow()
    return sorted(rows["path"].to_pylist())


@pytest.mark.slow
def test_build_then_search_and_status_from_other_processes(s3_config, test_models, cli):
    """With the test encoder, the other process's hybrid search reads the bucket's
    vectors as well as its full-text index, and loads no torch to do it."""
    s3_config.write_text(s3_config.read_text() + f"model: {test_models}\n")
    settings = load_settings(str(s3_config))
    summary = locked_build(settings)
    assert summary.outcome == "ok" and summary.files_new == 4
    assert store.exists(settings.index_dir)
    assert settings.build_lock.exists()  # the lock file is local; the tables are not
    assert not Path(settings.index_dir).exists()

    found = run_vq("--config", s3_config, "search", "canary rollout of traffic", "--json",
                   "--explain")
    assert found.returncode == 0, found.stderr
    out = json.loads(found.stdout)
    assert out["explain"]["method"] == "hybrid" and out["hits"][0]["path"] == "deploy.md"

    st = json.loads(cli("--config", s3_config, "status", "--json").output)
    assert st["index_dir"] == settings.index_dir
    assert [(v["id"], v["files"]) for v in st["vaults"]] == [("notes", 4)]
    assert st["last_build"]["outcome"] == "ok" and st["lock"] is None
    fresh = run_vq("--config", s3_config, "status", "--check")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr


@pytest.mark.model
def test_incremental_build_and_version_cleanup(s3_config, build, vault):
    settings = load_settings(str(s3_config))
    assert build(settings).outcome == "ok"
    before = chunk_paths(settings.index_dir)
    path = vault / "deploy.md"
    path.write_text(path.read_text().replace("twenty minutes", "thirty minutes"))
    (vault / "cooking.md").unlink()
    s = build(settings)
    assert (s.files_changed, s.files_deleted, s.chunks_encoded) == (1, 1, 1)
    after = chunk_paths(settings.index_dir)
    assert "cooking.md" in before and "cooking.md" not in after
    assert sorted(p for p in before if p != "cooking.md") == after
    noop = build(settings)
    assert (noop.files_unchanged, noop.chunks_encoded) == (3, 0)

    kept = len(store.open_index(settings.index_dir).chunks.list_versions())
    assert kept > 2  # the default grace keeps old versions for running readers
    cfg = s3_config.read_text() + "maintenance:\n  cleanup_grace_minutes: 0\n"
    s3_config.write_text(cfg)
    path.write_text(path.read_text() + "\nOne more line.\n")
    assert build(load_settings(str(s3_config))).outcome == "ok"
    # grace 0 deletes the old versions' files from the bucket (optimize itself may
    # commit once more after its cleanup)
    assert len(store.open_index(settings.index_dir).chunks.list_versions()) <= 2 < kept


@pytest.mark.slow
def test_readers_keep_searching_while_the_writer_commits(tmp_path, s3_uri, test_models):
    """Searching processes never fail and only see committed rows while builds commit."""
    vault = tmp_path / "vault"
    harness.write_vault(vault, 7, 20)
    cfg = harness.write_config(tmp_path / "vq.yaml", vault, s3_uri, batch=5, model=test_models)
    cfg.write_text(cfg.read_text().replace("cleanup_grace_minutes: 0",
                                           "cleanup_grace_minutes: 0.02"))
    log, stop = tmp_path / "committed.jsonl", tmp_path / "stop"
    code, err = readers.finish(readers.python(readers.WRITER, cfg, vault, log, 1), 600)
    assert code == 0, err[-2000:]
    outs = [tmp_path / f"reader-{m}.json" for m in ("lexical", "hybrid")]
    procs = [readers.python(readers.READER, cfg, m, stop, o)
             for m, o in zip(("lexical", "hybrid"), outs, strict=True)]
    writer = readers.python(readers.WRITER, cfg, vault, log, 2)
    try:
        code, err = readers.finish(writer, 600)
        assert code == 0, err[-2000:]
    finally:
        stop.touch()
        for proc in procs:
            readers.finish(proc, 300)
    committed = set().union(*(json.loads(line) for line in log.read_text().splitlines()))
    results = [json.loads(o.read_text()) for o in outs]
    assert [r["errors"] for r in results] == [[], []]
    assert all(r["searches"] > 0 for r in results)
    assert set().union(*(r["seen"] for r in results)) <= committed


# --- two builders anyway -----------------------------------------------------------------


def vq_build(cfg: Path, lock: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VQ_LOCK_PATH": str(lock)}
    return subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "vq", "--config",
                             str(cfg), "build", "--json", "--no-progress"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_two_builders_anyway_leave_readable_tables_and_a_build_converges(
        tmp_path, s3_uri, s3_endpoint, test_models):
    """Two builders on one bucket with different local locks. LanceDB commits each
    version with a conditional put, so every commit is whole and the tables stay
    readable; a builder may lose a commit conflict and fail saying so. vq's own
    bookkeeping can end up with duplicate rows (both builders wrote the same file),
    which the next plain build detects and repairs (see the deterministic test below)."""
    from vq.query.search import Query, search

    vault = tmp_path / "vault"
    harness.write_vault(vault, 3, 20)
    cfg = harness.write_config(tmp_path / "vq.yaml", vault, s3_uri, batch=4, model=test_models)
    cfg.write_text(cfg.read_text().replace("cleanup_grace_minutes: 0",
                                           "cleanup_grace_minutes: 10"))
    settings = load_settings(str(cfg))
    assert locked_build(settings).outcome == "ok"
    harness.mutate_vault(vault, 11)
    procs = [vq_build(cfg, tmp_path / f"builder{i}.lock") for i in range(2)]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        if proc.returncode == 0:
            outcomes.append(json.loads(out)["outcome"])
        else:  # the only failure allowed: a commit that lost a conflict, reported as such
            assert "conflict" in err.lower(), (proc.returncode, err[-2000:])
            outcomes.append("conflict")
    assert set(outcomes) <= {"ok", "conflict"}, outcomes

    index = store.open_index(s3_uri)  # readable after the race, every table whole
    assert index.chunks.count_rows() and index.files.count_rows()
    hits = search(settings, Query("fresh release", method="lexical")).hits
    assert hits and all(h.path.endswith(".md") for h in hits)

    assert locked_build(settings).outcome == "ok"
    clean = f"s3://{new_bucket(s3_endpoint)}/index"
    clean_cfg = harness.write_config(tmp_path / "clean.yaml", vault, clean, model=test_models)
    assert locked_build(load_settings(str(clean_cfg))).outcome == "ok"
    assert harness.snapshot(s3_uri) == harness.snapshot(clean)


@pytest.mark.model
def test_a_plain_build_repairs_what_two_racing_builders_leave(built, build):
    """What a race leaves, made deterministic: one file's manifest row and chunks twice."""
    index = store.open_index(built.index_dir)
    clean = harness.snapshot(built.index_dir)
    where = "path = 'deploy.md'"
    index.files.add(index.files.search().where(where).limit(None).to_arrow())
    index.chunks.add(index.chunks.search().where(where).limit(None).to_arrow())
    assert harness.snapshot(built.index_dir) != clean
    assert build(built).outcome == "ok"
    assert harness.snapshot(built.index_dir) == clean


@pytest.mark.model
def test_a_build_repairs_doubled_chunks_and_orphans(built, build):
    """Chunks written twice without a doubled manifest row, and chunks of a file the
    manifest forgot, are both found by the chunk-count check and repaired."""
    index = store.open_index(built.index_dir)
    clean = harness.snapshot(built.index_dir)
    index.chunks.add(index.chunks.search().where("path = 'deploy.md'").limit(None).to_arrow())
    index.files.delete("path = 'cooking.md'")
    assert build(built).outcome == "ok"
    assert harness.snapshot(built.index_dir) == clean
