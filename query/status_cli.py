"""`vq status`: per-vault counts, errors and the last build, without torch."""

from __future__ import annotations

import time

import click

from core.cli import echo_json, settings_from


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show what the index holds: files, chunks and errors per vault; the last build."""
    from query.status import read_status

    st = read_status(settings_from(ctx))
    if as_json:
        echo_json(st.to_json())
        return
    click.echo(f"index  {st.index_dir}")
    click.echo(f"model  {st.model} (dim {st.dim}, schema v{st.schema_version})")
    for v in st.vaults:
        note = "" if v.configured else "  (not in config: pruned at the next build)"
        if not v.root_exists and v.configured:
            note = "  (root missing: not pruned)"
        click.echo(f"vault  {v.id:<12} {v.files:>6} files {v.chunks:>7} chunks "
                   f"{v.errors:>4} errors  {v.kind:<5} {v.path}{note}")
    b = st.last_build
    if b:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(b["started_at"]))
        ago = time.time() - b["started_at"]
        click.echo(f"build  {when} ({_ago(ago)} ago), {b['seconds']:.1f}s, {b['outcome']}, "
                   f"device {b['device'] or '-'}")
    click.echo(f"lock   {('held by ' + st.lock) if st.lock else 'free'}")
    for e in st.errors:
        click.echo(f"error  {e['vault']}:{e['path']}: {e['error']}")


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"
