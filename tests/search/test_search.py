"""`vq search` against a real index: fusion, filters, fallback, output, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import lock_held_elsewhere, run_vq, write_config, write_tree
from tests.processes import reap
from vq.core import store
from vq.core.settings import load_settings
from vq.jobs.runner import locked_build
from vq.query.filters import Filters
from vq.query.search import Query, search

pytestmark = pytest.mark.model


def top(settings, text, method="hybrid", **kw):
    return search(settings, Query(text, method=method, **kw)).hits


def test_hybrid_finds_both_exact_terms_and_meaning(built):
    exact, meaning = "E4711", "how do I undo a broken deployment"
    assert top(built, exact, "lexical")[0].path == "errors.md"
    assert top(built, meaning, "dense")[0].breadcrumb.endswith("Rollback")
    hybrid_exact, hybrid_meaning = top(built, exact)[0], top(built, meaning)[0]
    assert hybrid_exact.path == "errors.md"
    assert hybrid_meaning.breadcrumb == "Deploying the service > Rollback"
    signals = hybrid_meaning.signals
    assert {"bm25", "dense"} <= set(signals) or "dense" in signals
    assert hybrid_meaning.score == pytest.approx(sum(signals["fused"].values()), rel=1e-4)


def test_filters_apply_before_top_k(built):
    """The best hits for bread are in cooking.md; --path still yields k hits inside adr/."""
    hits = top(built, "bake bread in a hot oven", limit=2, filters=Filters(paths=("adr/**",)))
    assert len(hits) == 2 and all(h.path.startswith("adr/") for h in hits)
    tagged = top(built, "release", filters=Filters(tags=("ops",)))
    assert tagged and {h.path for h in tagged} == {"deploy.md"}
    since = top(built, "release", filters=Filters(since="2026-11-01"))
    assert {h.path for h in since} >= {"deploy.md"}
    old = top(built, "release", filters=Filters(since="2099-01-01"))
    assert old == []


def test_lexical_fallback_when_model_cannot_load(built, config_file, cli):
    """A strict device that is absent makes the encoder unloadable: search still answers."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the fallback needs an unloadable device")
    result = cli("--config", config_file, "search", "E4711", "--json", "--explain",
                 env={"VQ_DEVICE": "cuda"})
    assert result.exit_code == 0
    assert "notice: model unavailable, searching lexically: accelerator required" in result.stderr
    out = json.loads(result.stdout)
    assert out["explain"]["method"] == "lexical" and out["explain"]["requested_method"] == "hybrid"
    assert out["hits"][0]["path"] == "errors.md"


def test_json_schema_files_and_exit_codes(built, config_file, cli, vault):
    result = cli("--config", config_file, "search", "canary rollout", "--json", "-n", "3")
    assert result.exit_code == 0
    hits = json.loads(result.stdout)
    assert 1 <= len(hits) <= 3 and [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    first = hits[0]
    assert {"rank", "score", "vault", "path", "abs_path", "start_line", "end_line", "breadcrumb",
            "kind", "snippet", "signals"} <= set(first)
    assert first["abs_path"] == str(vault / first["path"])
    assert "canary" in first["snippet"]
    files = cli("--config", config_file, "search", "canary rollout", "--files")
    paths = files.stdout.split()
    assert paths[0] == str(vault / "deploy.md") and len(paths) == len(set(paths))
    none = cli("--config", config_file, "search", "release", "--json", "--vault", "nope")
    assert none.exit_code == 1 and json.loads(none.stdout) == []
    assert "the vault filter matches nothing" in none.stderr
    bad = cli("--config", config_file, "search", "x", "--since", "yesterday-ish")
    assert bad.exit_code == 2 and "--since" in bad.stderr


def test_files_counts_files_not_hits(built, config_file, cli):
    """`--files -n 2` names two files even when one file holds the two best hits."""
    text = "the canary rollout and the rollback of a release"
    best = [h.path for h in top(built, text, "lexical", limit=2)]
    assert best == ["deploy.md", "deploy.md"]  # the case the option is for
    assert [h.path for h in top(built, text, "lexical", limit=2, files=True)][0] == "deploy.md"
    result = cli("--config", config_file, "search", text, "-m", "lexical", "--files", "-n", "2")
    paths = result.stdout.split()
    assert result.exit_code == 0 and len(paths) == 2 and len(set(paths)) == 2


def test_no_index_is_a_clear_error(tmp_path, vault, cli):
    cfg = write_config(tmp_path / "fresh.yaml", {"index_dir": str(tmp_path / "none"),
                                                  "vaults": {"n": {"path": str(vault)}}})
    result = cli("--config", cfg, "search", "anything")
    assert result.exit_code == 2
    assert f"no index at {tmp_path / 'none'}" in result.stderr and "vq build" in result.stderr


def test_no_index_while_the_first_build_runs_says_to_search_again(tmp_path, vault, cli):
    """`vq build &` then `vq search`: the first seconds of a first build have no index
    yet, and "run `vq build` first" told the user to start the build already running."""
    index_dir = tmp_path / "index"
    cfg = write_config(tmp_path / "fresh.yaml", {"index_dir": str(index_dir),
                                                  "vaults": {"n": {"path": str(vault)}}})
    with lock_held_elsewhere(index_dir / "build.lock") as pid:
        result = cli("--config", cfg, "search", "anything")
    assert result.exit_code == 2
    assert f"the first build is running (pid {pid} since" in result.stderr, result.stderr
    assert "search again in a few seconds" in result.stderr
    assert "run `vq build` first" not in result.stderr


def test_a_query_that_begins_with_a_dash_says_how_to_search_for_it(cli):
    """``vq search "--pre preprocessor command"`` (ripgrep's flag) is an unknown option
    to click; the error says to put ``--`` first. A typo of a real option keeps click's
    "did you mean"."""
    result = cli("search", "--pre preprocessor command")
    assert result.exit_code == 2
    assert "vq search -- '--pre preprocessor command'" in result.stderr, result.stderr
    typo = cli("search", "--limt", "3", "foo")
    assert typo.exit_code == 2 and "--limit" in typo.stderr
    assert "vq search --" not in typo.stderr


def test_rerank_order_follows_the_cross_encoder(built, tmp_path):
    from dataclasses import replace

    from sentence_transformers import CrossEncoder

    from vq.core.encoder import model_location
    from vq.core.settings import SearchSettings
    from vq.query.encoders import cross_encoder

    path = tmp_path / "cross"
    CrossEncoder(model_location("all-MiniLM-L6-v2"), num_labels=1).save(str(path))
    settings = replace(built, search=SearchSettings(rerank_model=str(path), rerank_top=5))
    res = search(settings, Query("release rollback storage", rerank=True, limit=5))
    model = cross_encoder(str(path), "cpu")
    chunks = store.open_index(built.index_dir).chunks
    texts = [chunks.search().where(f"id = '{h.id}'").select(["text"]).to_list()[0]["text"]
             for h in res.hits]  # the reranker reads the full embed text, breadcrumb included
    scores = model.predict([("release rollback storage", t) for t in texts])
    assert [h.signals["rerank"]["score"] for h in res.hits] == pytest.approx(
        sorted((float(s) for s in scores), reverse=True), abs=1e-4)


def test_search_during_a_concurrent_build_never_errors(tmp_path, vault, test_models):
    """A build in another process rewrites files while this process keeps searching.
    The searches start when the writer has imported what it needs (a loop spinning
    through its start-up would only slow it down) and are lexical, so both sides use
    the test encoder: no torch import in the writer's first round either."""
    config_file = write_config(tmp_path / "hash.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "vaults": {"notes": {"path": str(vault), "kind": "notes"}}})
    settings = load_settings(str(config_file))
    assert locked_build(settings).outcome == "ok"
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from vq.core.settings import load_settings
        from vq.jobs.runner import locked_build
        settings = load_settings({str(config_file)!r})
        root = Path({str(vault)!r})
        print("ready", flush=True)
        for round in range(4):
            for i in range(15):
                text = f"# Gen {{i}}\\n\\nround {{round}} release notes {{i}}\\n"
                (root / f"gen{{i}}.md").write_text(text)
            locked_build(settings)
        print("done", flush=True)
        """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"  # "" if it died on the way
        searches = 0
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            hits = top(settings, "release notes", "lexical", limit=5)
            assert hits and all(h.start_line >= 1 for h in hits)
            searches += 1
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and out.strip() == "done"
    finally:  # reaped and its pipe closed on every path, a failed assertion's too
        reap(proc)
    assert searches > 0
    assert any(h.path.startswith("gen") for h in top(settings, "round 3 release notes", "lexical"))


@pytest.mark.slow
def test_cold_cli_paths_stay_light(built, config_file):
    """status, --help and lexical search never import torch; search never imports indexer;
    nor LanceDB's REST API classes (core/lazy_rest.py)."""
    probe = ("import runpy, sys; sys.argv = ['vq'] + sys.argv[1:]\n"
             "try:\n    runpy.run_module('vq', run_name='__main__')\n"
             "except SystemExit: pass\n"
             "print('MODS', 'torch' in sys.modules, any(m.startswith('vq.indexer') "
             "for m in sys.modules), 'lance_namespace_urllib3_client.api' in sys.modules, "
             "file=sys.stderr)")
    for args in (["--help"], ["status"], ["search", "--method", "lexical", "E4711"]):
        out = subprocess.run([sys.executable, "-c", probe, "--config", str(config_file), *args],
                             capture_output=True, text=True, timeout=120)
        assert "MODS False False False" in out.stderr, (args, out.stderr[-500:])
    out = run_vq("--config", config_file, "search", "--method", "lexical", "E4711")
    assert out.returncode == 0 and "errors.md" in out.stdout


def test_closed_pipe_exits_quietly(built, config_file):
    write_tree(built.vault("notes").path, {f"many{i}.md": f"# Many {i}\n\nrelease {i}\n"
                                           for i in range(5)})
    cmd = (f"{sys.executable} -m vq --config {config_file} search release "
           "--method lexical --files | head -0")
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr


def test_a_test_encoder_index_is_searched_hybrid_without_torch(tmp_path, vault, test_models):
    """The build and the search take their encoder from one factory: an index built with
    the test encoder is searched with it (hybrid), in a process that never imports torch."""
    config = write_config(tmp_path / "hash.yaml", {
        "index_dir": str(tmp_path / "hash-index"), "model": test_models,
        "vaults": {"notes": {"path": str(vault)}}})
    build = run_vq("--config", config, "build")
    assert build.returncode == 0, build.stderr
    probe = ("import json, sys\n"
             "from vq.core.settings import load_settings\n"
             "from vq.query.search import Query, search\n"
             f"res = search(load_settings({str(config)!r}), Query('undo a bad release'))\n"
             "print(json.dumps([res.method, res.device, res.encoder, res.notices,\n"
             "                  'torch' in sys.modules, [h.path for h in res.hits]]))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "VQ_TEST_MODELS": "1"})
    assert out.returncode == 0, out.stderr
    method, device, encoder, notices, torch_loaded, paths = json.loads(out.stdout)
    assert (method, device, encoder, notices) == ("hybrid", "cpu", "in-process", [])
    assert not torch_loaded and "deploy.md" in paths
