"""A long build's start and finish are labelled the same way in `vq status`, `status --check`
and `vq doctor`: the issue saw "54m ago" in one and "6m ago" in the other, unlabelled."""

from __future__ import annotations

import json
import time
from dataclasses import replace

from tests.conftest import write_config

STARTED_AGO, TOOK = 54 * 60, 48 * 60


def test_start_and_finish_read_alike_everywhere(settings, test_models, cli, vault):
    from vq.core import store
    from vq.core.builds import record_build, when_built
    from vq.jobs.runner import locked_build

    settings = replace(settings, model=test_models)
    assert locked_build(settings).outcome == "ok"
    config = write_config(settings.config_file, {
        "index_dir": settings.index_dir, "model": test_models,
        "vaults": {"notes": {"path": str(vault), "kind": "notes"}}})
    index = store.open_for(settings)
    index.builds.delete("true")
    started = time.time() - STARTED_AGO
    record_build(index, settings, started, TOOK, "ok", test_models, "cpu", {})
    expected = when_built({"started_at": started, "seconds": TOOK})
    assert expected.startswith("started ") and "(54m ago), finished " in expected
    assert "(6m ago), took 48m 00s" in expected

    status = cli("--config", config, "status")
    check = cli("--config", config, "status", "--check")
    doctor = cli("--config", config, "doctor", "--no-model")
    build_line = next(ln for ln in status.stdout.splitlines() if ln.startswith("build "))
    assert expected in build_line and build_line.endswith("; ok, device cpu")
    assert check.exit_code == 0 and f"(last build {expected}; ok)" in check.stdout
    assert expected in next(ln for ln in doctor.stdout.splitlines() if "✓ last build" in ln)
    as_json = json.loads(cli("--config", config, "status", "--json").stdout)["last_build"]
    assert as_json["finished_at"] - as_json["started_at"] == TOOK
