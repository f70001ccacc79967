"""`vq mcp` driven by the official MCP client: over stdio in a subprocess, against a real index.

The server must answer search/status/get, refuse every path that is not an
indexed file inside its vault (as an MCP tool error, never a traceback), and
keep answering while a build in another process rewrites the tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import write_config, write_tree
from tests.processes import reap
from vq.core import store
from vq.query.mcp.server import MAX_BYTES, MAX_LINES, VqService, build_server

pytestmark = pytest.mark.model

HIT_FIELDS = {"rank", "score", "vault", "path", "abs_path", "start_line", "end_line",
              "breadcrumb", "kind", "snippet", "signals"}


def over_stdio(config_file: Path, body: Any, errlog: Path | None = None) -> Any:
    """Run ``await body(client)`` against `python -m vq --config CFG mcp`."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "vq", "--config", str(config_file), "mcp"],
        env=dict(os.environ), cwd=os.getcwd())

    async def main() -> Any:
        with open(errlog or os.devnull, "w") as err, anyio.fail_after(240):
            async with Client(stdio_client(params, errlog=err), read_timeout_seconds=180) as c:
                return await body(c)

    return anyio.run(main)


def in_process(settings: Any, body: Any) -> Any:
    async def main() -> Any:
        async with Client(build_server(settings)) as client:
            return await body(client)

    return anyio.run(main)


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def refused(result: Any, phrase: str) -> str:
    text = text_of(result)
    assert result.is_error, text
    assert phrase in text, text
    assert "Traceback" not in text and 'File "' not in text, text
    return text


def versions(settings: Any) -> tuple[int, int]:
    index = store.open_index(settings.index_dir)
    return index.chunks.version, index.files.version


def test_tools_over_stdio(built, config_file, vault, tmp_path):
    before = versions(built)

    async def body(client: Client) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        out: dict[str, Any] = {"tools": tools}
        out["hybrid"] = await client.call_tool(
            "search", {"query": "how do I undo a broken deployment", "k": 3})
        out["lexical"] = await client.call_tool(
            "search", {"query": "E4711", "method": "lexical", "vaults": ["notes"]})
        out["filtered"] = await client.call_tool(
            "search", {"query": "storage", "paths": ["adr/**"], "kinds": ["notes"]})
        out["tagged"] = await client.call_tool("search", {"query": "traffic", "tags": ["OPS"]})
        out["status"] = await client.call_tool("status", {"check": True})
        hit = out["hybrid"].structured_content["hits"][0]
        out["hit"] = hit
        out["get"] = await client.call_tool("get", {
            "path": f"{hit['vault']}:{hit['path']}", "start_line": hit["start_line"],
            "end_line": hit["end_line"]})
        out["get_abs"] = await client.call_tool("get", {"path": hit["abs_path"]})
        out["get_rel"] = await client.call_tool("get", {"path": "./adr/0001-storage.md"})
        return out

    out = over_stdio(config_file, body, errlog=tmp_path / "server.err")
    tools = out["tools"]
    assert set(tools) == {"search", "status", "get"}
    assert "Writing the query" in tools["search"].description
    assert "weak" in tools["search"].description
    assert all(t.annotations.read_only_hint for t in tools.values())
    assert tools["search"].input_schema["properties"]["k"]["maximum"] == 50

    hybrid = out["hybrid"]
    assert not hybrid.is_error
    data = hybrid.structured_content
    assert data["method"] == "hybrid" and data["device"] and data["notices"] == []
    assert 1 <= len(data["hits"]) <= 3 and set(data["hits"][0]) >= HIT_FIELDS
    assert data["hits"][0]["breadcrumb"] == "Deploying the service > Rollback"
    assert set(data["hits"][0]["signals"]) <= {"bm25", "dense", "sections", "fused"}
    lexical = out["lexical"].structured_content
    assert lexical["method"] == "lexical" and lexical["hits"][0]["path"] == "errors.md"
    filtered = out["filtered"].structured_content["hits"]
    assert filtered and all(h["path"].startswith("adr/") for h in filtered)
    tagged = out["tagged"].structured_content
    assert {h["path"] for h in tagged["hits"]} == {"deploy.md"}
    assert tagged["filters"]["tags"] == ["OPS"]

    status = out["status"].structured_content
    (notes,) = status["vaults"]
    assert (notes["id"], notes["files"], notes["errors"]) == ("notes", 4, 0)
    assert status["last_build"]["outcome"] == "ok"
    assert status["freshness"]["fresh"] is True and status["freshness"]["stale"] == []
    assert status["freshness"]["build_running"] is False
    assert status["encoder"].startswith("loaded")

    hit, got = out["hit"], out["get"].structured_content
    lines = (vault / hit["path"]).read_text().split("\n")
    assert got["text"] == "\n".join(lines[hit["start_line"] - 1:hit["end_line"]])
    assert (got["start_line"], got["end_line"]) == (hit["start_line"], hit["end_line"])
    assert not got["truncated"] and not got["changed_since_indexed"]
    assert out["get_abs"].structured_content["text"] == (vault / hit["path"]).read_text()[:-1]
    rel = out["get_rel"].structured_content
    assert (rel["vault"], rel["path"]) == ("notes", "adr/0001-storage.md")

    assert versions(built) == before  # read-only: no table got a new version
    assert "Traceback" not in (tmp_path / "server.err").read_text()


def test_get_refuses_paths_outside_the_index(built, config_file, vault, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    (vault / "link.md").symlink_to(secret)             # never indexed
    (vault / "cooking.md").unlink()
    (vault / "cooking.md").symlink_to(secret)          # indexed, now leads out of the vault
    (vault / "adr" / "0001-storage.md").unlink()
    os.symlink(tmp_path, vault / "adr" / "0001-storage.md")  # indexed, now a folder link
    attempts = [
        ({"path": "../secret.txt"}, "'..' is not allowed"),
        ({"path": "notes:../secret.txt"}, "'..' is not allowed"),
        ({"path": "adr/../../secret.txt"}, "'..' is not allowed"),
        ({"path": str(vault) + "/../secret.txt"}, "'..' is not allowed"),
        ({"path": "..\\secret.txt"}, "'..' is not allowed"),
        ({"path": str(secret)}, "is outside every vault root"),
        ({"path": "/etc/passwd"}, "is outside every vault root"),
        ({"path": "notes:link.md"}, "notes:link.md is not in the index"),
        ({"path": "link.md"}, "link.md is not in the index"),
        ({"path": str(vault / "link.md")}, "notes:link.md is not in the index"),
        ({"path": "notes:/etc/passwd"}, "notes:etc/passwd is not in the index"),
        ({"path": "notes:cooking.md"}, "resolves outside the vault root"),
        ({"path": str(vault / "cooking.md")}, "resolves outside the vault root"),
        ({"path": "adr/0001-storage.md", "vault": "notes"}, "resolves outside the vault root"),
        ({"path": "deploy.md", "vault": "nope"}, "unknown vault 'nope'"),
        ({"path": "notes:deploy.md", "start_line": 999}, "past the end"),
        ({"path": "notes:deploy.md", "start_line": 0}, "greater than or equal to 1"),
    ]

    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("get", args) for args, _ in attempts]

    results = over_stdio(config_file, body, errlog=tmp_path / "server.err")
    for (args, phrase), result in zip(attempts, results, strict=True):
        text = refused(result, phrase)
        assert "SECRET" not in text, args
    assert "Traceback" not in (tmp_path / "server.err").read_text()


BUILDER = """
    import sys
    from pathlib import Path
    from vq.core.encoder import shared_model
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build
    settings = load_settings({config!r})
    root = Path({vault!r})
    shared_model("encoder", settings.model, settings.device, settings.batch_size)
    print("ready", flush=True)
    for round in range(2):
        sys.stdin.readline()
        for i in range(10):
            text = f"# Gen {{i}}\\n\\nround {{round}} release notes {{i}}\\n"
            (root / f"gen{{i}}.md").write_text(text)
        # wait: a status call probes the lock by taking it for an instant
        assert locked_build(settings, wait=120).outcome == "ok"
        print(f"round {{round}}", flush=True)
    """


def test_search_while_a_build_writes(built, config_file, vault, tmp_path):
    """Each call sees the latest commit; calls during a build in another process never fail.

    Lexical searches keep the server light (the warm hybrid path is covered above);
    the FTS index is what a build rewrites and optimizes, the riskier read.
    """
    script = textwrap.dedent(BUILDER.format(config=str(config_file), vault=str(vault)))
    builder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)

    def step() -> str:
        builder.stdin.write("go\n")
        builder.stdin.flush()
        return builder.stdout.readline().strip()

    async def search(client: Client, query: str) -> dict[str, Any]:
        result = await client.call_tool("search", {"query": query, "k": 5,
                                                   "method": "lexical"})
        assert not result.is_error, text_of(result)
        return result.structured_content

    async def body(client: Client) -> tuple[list[str], int, list[str]]:
        assert (await search(client, "release"))["hits"]
        assert await anyio.to_thread.run_sync(builder.stdout.readline) == "ready\n"
        assert await anyio.to_thread.run_sync(step) == "round 0"
        first = [h["path"] for h in (await search(client, "round 0 release notes"))["hits"]]
        builder.stdin.write("go\n")
        builder.stdin.flush()
        calls, deadline = 0, time.monotonic() + 180
        while builder.poll() is None and time.monotonic() < deadline:
            res = await search(client, "release notes")
            assert res["hits"] and all(h["start_line"] >= 1 for h in res["hits"])
            status = await client.call_tool("status", {})
            assert not status.is_error, text_of(status)
            calls += 1
        last = [h["snippet"] for h in (await search(client, "round 1 release notes"))["hits"]]
        return first, calls, last

    try:
        first, calls, last = over_stdio(config_file, body, errlog=tmp_path / "server.err")
    finally:
        code = reap(builder)  # killed if it still runs
    assert code == 0
    assert any(p.startswith("gen") for p in first)        # a commit from another process
    assert calls > 0
    assert any("round 1" in s for s in last)
    assert "Traceback" not in (tmp_path / "server.err").read_text()


def test_lexical_fallback_is_reported_and_remembered(built):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the fallback needs an unloadable device")
    service = VqService(replace(built, device="cuda"))
    for _ in range(2):
        res = service.search("E4711")
        assert (res["method"], res["requested_method"]) == ("lexical", "hybrid")
        assert res["notices"][0].startswith("model unavailable, searching lexically")
        assert res["hits"][0]["path"] == "errors.md"
    assert service.status()["encoder"].startswith("model unavailable")


def test_get_caps_lines_and_bytes(built, build, vault):
    write_tree(vault, {"long.md": "# Long\n\n" + "".join(f"line {i}\n" for i in range(3, 1001)),
                       "wide.md": "# Wide\n\n" + ("x" * 1000 + "\n") * 100})
    build(built)
    service = VqService(built)
    page = service.get("notes:long.md")
    assert (page["start_line"], page["end_line"], page["total_lines"]) == (1, MAX_LINES, 1000)
    assert page["truncated"] and page["truncated_by"].startswith("line cap")
    capped = service.get("notes:long.md", start_line=901, end_line=2000)
    assert (capped["end_line"], capped["truncated"]) == (1000, False)
    wanted = service.get("notes:long.md", start_line=1, end_line=2000)
    assert wanted["end_line"] == MAX_LINES and wanted["truncated_by"].startswith("line cap")
    nxt = service.get("long.md", start_line=MAX_LINES + 1, end_line=MAX_LINES + 2)
    assert nxt["text"] == f"line {MAX_LINES + 1}\nline {MAX_LINES + 2}" and not nxt["truncated"]
    wide = service.get("notes:wide.md")
    assert wide["truncated_by"].startswith("size cap") and len(wide["text"]) <= MAX_BYTES
    (vault / "long.md").write_text("# Long\n\nedited\n")
    assert service.get("notes:long.md")["changed_since_indexed"]
    fresh = service.status(check=True)["freshness"]
    assert not fresh["fresh"] and fresh["stale"] == [
        {"vault": "notes", "path": "long.md", "reason": "changed"}]
    assert service.status()["freshness"]["fresh"] is None  # no walk unless asked


def test_missing_index_is_a_clear_tool_error(tmp_path, settings):
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("status", {}),
                await client.call_tool("search", {"query": "anything"})]

    for result in in_process(settings, body):
        refused(result, f"no index at {settings.index_dir}. Next: run `vq build` first")


@pytest.mark.model
def test_get_serves_a_pdfs_indexed_text_by_hit_lines(built, build, vault):
    from tests.index.test_documents import make_pdf

    (vault / "manual.pdf").write_bytes(make_pdf([["Alpha page one"], ["Bravo page two"]]))
    build(built)
    service = VqService(built)
    hit = next(h for h in service.search("Bravo page two", method="lexical")["hits"]
               if h["path"] == "manual.pdf")
    got = service.get("notes:manual.pdf", hit["start_line"], hit["end_line"])
    assert "Bravo page two" in got["text"] and got["source"].startswith("indexed text")


@pytest.mark.model
def test_search_narrows_to_languages_and_symbols_as_the_cli_does(tmp_path, build):
    """An assistant asking for "the TypeScript that parses dates" can say so: `languages`
    and `symbols` are the CLI's --lang and --symbol; an unknown language is a tool error
    that names the closest one."""
    from vq.core.errors import VqError
    from vq.core.settings import load_settings

    write_tree(tmp_path / "src", {
        "dates.py": "def parse(text):\n    \"\"\"Parse an ISO date.\"\"\"\n    return text\n",
        "dates.ts": "export function parse(text: string): Date {\n  return new Date(text)\n}\n",
        "Picker.vue": "<script setup>\nfunction parse(text) {\n  return Date.parse(text)\n}\n"
                      "</script>\n\n<template>\n  <input />\n</template>\n"})
    cfg = write_config(tmp_path / "vq.yaml", {"index_dir": str(tmp_path / "index"),
                                              "vaults": {"src": {"path": str(tmp_path / "src"),
                                                                 "kind": "code"}}})
    settings = load_settings(str(cfg))
    assert build(settings).outcome == "ok"
    service = VqService(settings)
    hits = service.search("parse a date", languages=["TypeScript", "vue"])["hits"]
    assert {h["path"] for h in hits} == {"dates.ts", "Picker.vue"}
    named = service.search("parse a date", symbols=["parse"])["hits"]
    assert {h["path"] for h in named} == {"dates.py", "dates.ts", "Picker.vue"}
    assert all(h["symbol"] == "parse" for h in named)
    with pytest.raises(VqError, match="did you mean `--lang python`"):
        service.search("parse a date", languages=["py"])
