"""Issue 17, item 4: a damaged index is one error line and a way out, never a dead end.

On main a truncated version manifest made `search` and `status` print a
traceback (exit 1, which means "no results"), both `vq build` and `vq build
--rebuild` failed, and doctor called it a vq bug; a deleted data file passed
`status` and `doctor` as healthy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vq.core import store
from vq.core.errors import VqError
from vq.query.mcp.server import VqService

pytestmark = pytest.mark.model

COMMANDS = [("status",), ("status", "--json"), ("status", "--check"),
            ("search", "--method", "lexical", "canary"), ("search", "--json", "--method",
                                                          "lexical", "bread"), ("build",)]


def _mcp_calls(settings) -> list:
    import anyio
    from mcp import Client

    from vq.query.mcp.server import build_server

    async def main() -> list:
        async with Client(build_server(settings)) as client:
            return [await client.call_tool("status", {}),
                    await client.call_tool("search", {"query": "bread", "method": "lexical"})]

    return anyio.run(main)


def truncate_manifest(index_dir: Path) -> None:
    latest = min((index_dir / "chunks.lance" / "_versions").glob("*.manifest"))  # names count down
    with open(latest, "r+b") as fh:
        fh.truncate(100)


def delete_data_files(index_dir: Path) -> None:
    for path in (index_dir / "chunks.lance" / "data").glob("*.lance"):
        path.unlink()


def assert_one_error_line(result) -> None:
    err = result.stderr
    assert result.exit_code == 2, (result.exit_code, err)
    assert "Traceback" not in err and "Traceback" not in result.stdout
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 2 and lines[0].startswith("error: ") and "cannot be read" in lines[0]
    assert lines[1].startswith("next: run `vq build --rebuild`"), err


@pytest.mark.parametrize("damage", [truncate_manifest, delete_data_files])
def test_every_command_meets_a_damaged_index_with_one_line_and_rebuild_recovers(
        built, config_file, cli, build, damage):
    index_dir = Path(built.index_dir)
    damage(index_dir)
    for args in COMMANDS:
        assert_one_error_line(cli("--config", config_file, *args))
    doctor = cli("--config", config_file, "doctor", "--no-model")
    assert doctor.exit_code == 1 and "bug" not in doctor.stdout
    assert "✗ index" in doctor.stdout and "next: run `vq build --rebuild`" in doctor.stdout
    with pytest.raises(VqError, match="cannot be read"):
        VqService(built).status()
    for result in _mcp_calls(built):
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert result.is_error and "vq build --rebuild" in text and "Traceback" not in text
    assert build(built, rebuild=True).outcome == "ok"
    assert not (index_dir / store.STAGE_DIR).exists()
    found = cli("--config", config_file, "search", "--method", "lexical", "--files", "bread")
    assert found.exit_code == 0 and "cooking.md" in found.stdout
    assert cli("--config", config_file, "doctor", "--no-model").exit_code == 0
    assert len(store.open_for(built).builds.to_arrow()) >= 1


def test_doctor_reads_the_full_text_index(built, config_file, cli):
    for path in (Path(built.index_dir) / "chunks.lance" / "_indices").rglob("*"):
        if path.is_file():
            path.unlink()
    doctor = cli("--config", config_file, "doctor", "--no-model")
    assert doctor.exit_code == 1 and "✗ full-text index reads" in doctor.stdout, doctor.stdout


class _FailingEncoder:
    """The real encoder's shape, failing as it is asked for vectors: the rebuild has
    committed its text to the staged tables and dies before their vectors."""

    def __init__(self, real):
        self.dim, self.device = real.dim, real.device

    def encode(self, texts, **kwargs):
        raise RuntimeError("encoder died")


def test_a_failed_or_stopped_rebuild_leaves_the_old_index(built, encoder, config_file, cli,
                                                          vault):
    from dataclasses import replace

    from vq.jobs.runner import locked_build

    before = store.open_for(built)
    rows, version = before.chunks.count_rows(), before.chunks.version
    for i in range(6):
        (vault / f"extra{i}.md").write_text(f"# Extra {i}\n\nfiller words number {i}\n")
    small = replace(built, write_batch_files=2)
    with pytest.raises(RuntimeError, match="encoder died"):
        locked_build(small, rebuild=True, encoder=_FailingEncoder(encoder))
    stopped = locked_build(small, rebuild=True, encoder=encoder, should_stop=lambda: True)
    assert stopped.outcome == "interrupted" and stopped.continued_rebuild
    after = store.open_for(built)
    assert (after.chunks.count_rows(), after.chunks.version) == (rows, version)
    assert (Path(built.index_dir) / store.STAGE_DIR).is_dir(), "the stage is the next's start"
    found = cli("--config", config_file, "search", "--method", "lexical", "--files", "bread")
    assert found.exit_code == 0 and "cooking.md" in found.stdout
    assert "extra" not in cli("--config", config_file, "search", "--method", "lexical",
                              "--files", "filler").stdout
    resumed = locked_build(small, encoder=encoder)
    assert resumed.outcome == "ok" and resumed.continued_rebuild and resumed.staged_files
    assert not (Path(built.index_dir) / store.STAGE_DIR).exists()
    found = cli("--config", config_file, "search", "--method", "lexical", "--files", "filler")
    assert found.exit_code == 0 and "extra0.md" in found.stdout
