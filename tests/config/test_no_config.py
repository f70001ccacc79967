"""A newcomer's first command, with no config anywhere: every command says how to create
one (`vq init`, `vq vault add`), not only "run `vq build`" or "no vaults configured"."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

CREATE = ("vq init", "vq vault add ID PATH")


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """An empty folder with no .vq.yaml above it and no user config."""
    folder = tmp_path / "new-project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("args", [
    ("search", "how do we deploy"), ("search", "--method", "lexical", "deploy"),
    ("build",), ("status",), ("status", "--check"),
])
def test_each_command_says_how_to_create_a_config(nowhere, cli, args):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    err = result.stderr
    assert "no config found" in err
    assert all(step in err for step in CREATE), err
    assert err.splitlines()[0].startswith("error: ") and err.splitlines()[1].startswith("next: ")


def test_doctor_says_it_on_every_line_that_fails(nowhere, cli):
    result = cli("doctor", "--no-model")
    fixes = [ln.strip() for ln in result.stdout.splitlines() if ln.strip().startswith("next:")]
    assert len(fixes) >= 3  # config, vaults configured, index
    assert all("vq init" in fix for fix in fixes), fixes
    assert "run `vq build`" not in result.stdout


def test_the_mcp_tools_say_it_too(nowhere):
    from vq.core.settings import load_settings
    from vq.query.mcp.server import build_server

    async def main() -> list[Any]:
        async with Client(build_server(load_settings())) as client:
            return [await client.call_tool("search", {"query": "deploy"}),
                    await client.call_tool("status", {})]

    for result in anyio.run(main):
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert result.is_error and "no config found" in text
        assert all(step in text for step in CREATE), text
