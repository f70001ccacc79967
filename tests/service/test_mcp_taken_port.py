"""`vq mcp --http PORT` on a port something else holds: one `error:` line with a `next:`,
exit 2, and no "serving" line first (it used to print "serving", then uvicorn's
`[Errno 98]`, and exit 3)."""

from __future__ import annotations

import socket

import pytest

from tests.conftest import run_vq
from vq.core.errors import VqError
from vq.query.mcp.http import listen


@pytest.fixture
def taken_port():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_taken_port_is_one_error_with_the_fix(taken_port, config_file, tmp_path):
    done = run_vq("--config", config_file, "mcp", "--http", str(taken_port),
                  env={"VQ_MCP_TOKEN": "t" * 40}, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0] == f"error: cannot serve on 127.0.0.1:{taken_port}: the port is already in use"
    assert lines[1].startswith("next: stop what listens there")
    assert f"vq mcp --http {taken_port + 1}" in lines[1]
    assert len(lines) == 2 and "serving" not in done.stderr and not done.stdout


def test_listen_binds_a_free_port_and_names_other_failures():
    sock = listen("127.0.0.1", 0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()
    with pytest.raises(VqError, match="is not an address of this machine") as exc:
        listen("192.0.2.1", 8765)  # TEST-NET-1: never one of ours
    assert "127.0.0.1" in exc.value.fix
