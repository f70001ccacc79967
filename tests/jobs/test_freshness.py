"""`vq status --check`: fresh vs stale from a stat walk, age limits, and no torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO, write_config


def check_json(cli, config, *extra):
    result = cli("--config", config, "status", "--check", "--json", *extra)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.model
def test_fresh_after_a_build_then_stale_with_what_changed_then_fresh_again(
        cli, built, build, vault):
    cfg = built.config_file
    result = cli("--config", cfg, "status", "--check")
    assert result.exit_code == 0 and result.stdout.startswith("fresh: 4 files")

    (vault / "deploy.md").write_text("# Deploying\n\nNow with a blue-green switch.\n")
    (vault / "cooking.md").unlink()
    (vault / "new.md").write_text("# New\n\nA note written after the build.\n")
    code, data = check_json(cli, cfg)
    assert code == 1 and data["fresh"] is False
    assert {(s["path"], s["reason"]) for s in data["stale"]} == {
        ("deploy.md", "changed"), ("cooking.md", "deleted"), ("new.md", "new")}
    text = cli("--config", cfg, "status", "--check")
    assert text.exit_code == 1 and "  deleted       notes:cooking.md" in text.stdout

    assert build(built).outcome == "ok"
    code, data = check_json(cli, cfg)
    assert (code, data["fresh"], data["stale"]) == (0, True, [])


@pytest.mark.model
def test_touched_and_half_rewritten_files_and_a_removed_vault_are_stale(
        cli, built, vault, tmp_path):
    from vq.core import store
    from vq.indexer.write import mark_pending

    stat = (vault / "errors.md").stat()
    os.utime(vault / "errors.md", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    # what a build killed while rewriting a file leaves behind: its manifest hash blanked
    mark_pending(store.open_index(built.index_dir), [("notes", "adr/0001-storage.md")])
    code, data = check_json(cli, built.config_file)
    assert code == 1 and sorted((s["path"], s["reason"]) for s in data["stale"]) == [
        ("adr/0001-storage.md", "unfinished"), ("errors.md", "changed")]

    other = tmp_path / "other"
    other.mkdir()
    write_config(built.config_file, {"index_dir": built.index_dir,
                                     "vaults": {"other": {"path": str(other)}}})
    code, data = check_json(cli, built.config_file)
    assert code == 1 and data["stale"] == [{"vault": "notes", "path": "",
                                            "reason": "vault removed"}]


@pytest.mark.model
def test_max_age_compares_the_last_build_with_now(built):
    from vq.core import store
    from vq.core.freshness import check_freshness
    from vq.query.status import last_build

    index = store.open_index(built.index_dir)
    last = last_build(index)
    done = last["started_at"] + last["seconds"]
    young = check_freshness(built, index, last, max_age_seconds=900, now=done + 60)
    old = check_freshness(built, index, last, max_age_seconds=900, now=done + 3600)
    unbounded = check_freshness(built, index, last, now=done + 86400 * 30)
    never = check_freshness(built, index, None, max_age_seconds=900)
    assert (young.fresh, young.too_old) == (True, False)
    assert (old.fresh, old.too_old, old.stale) == (False, True, [])
    assert unbounded.fresh
    assert (never.fresh, never.too_old) == (False, True)


@pytest.mark.model
def test_max_age_flag_reads_durations_and_needs_check(cli, built):
    result = cli("--config", built.config_file, "status", "--check", "--max-age", "1d")
    assert result.exit_code == 0
    assert cli("--config", built.config_file, "status", "--max-age", "1d").exit_code == 2
    bad = cli("--config", built.config_file, "status", "--check", "--max-age", "soon")
    assert bad.exit_code == 2 and "cannot read 'soon' as a duration" in bad.output


def test_check_without_an_index_is_an_error(cli, config_file):
    result = cli("--config", config_file, "status", "--check")
    assert result.exit_code == 2 and "no index" in result.output


SCRIPT = textwrap.dedent("""\
    import json, sys
    from vq.cli import cli
    try:
        cli(sys.argv[2:], prog_name="vq")
    except SystemExit as exc:
        code = exc.code
    heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
    heavy += sorted({m.split(".")[1] for m in sys.modules
                     if m.startswith(("vq.indexer", "vq.jobs"))})
    with open(sys.argv[1], "w") as out:
        json.dump({"code": code, "heavy": heavy}, out)
    """)


@pytest.mark.model
@pytest.mark.slow
def test_status_check_in_a_fresh_interpreter_never_imports_torch_or_the_write_side(
        built, vault, tmp_path):
    (vault / "late.md").write_text("# Late\n\nWritten after the build.\n")
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(report), "--config",
                           str(built.config_file), "status", "--check", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    result = json.loads(report.read_text())
    assert result == {"code": 1, "heavy": []}, done.stderr
    assert [s["path"] for s in json.loads(done.stdout)["stale"]] == ["late.md"]
