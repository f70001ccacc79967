"""`vq status`: per-vault counts, errors and the last build, without torch.

``--check`` turns it into a freshness probe for CI and monitoring: a stat walk
against the manifest (``vq.core.freshness``: the build's own walk and reconcile,
imported only for ``--check``), exit 0 fresh, 1 stale, 2 error. Still no model
and no torch.
"""

from __future__ import annotations

from typing import Any

import click

from vq.cli.shared import echo_json, settings_from
from vq.core.build_progress import chunks_of
from vq.core.builds import ago, when_built
from vq.core.display import shown

CHECK_CODES = """\b
Exit codes with --check:
  0  fresh: no file changed since the last build (and, with --max-age,
     the last build finished no longer ago than that)
  1  stale: lists what changed, or says the last build is too old
  2  error (no index, bad config, ...)"""
SHOW_STALE = 50


@click.command(epilog=CHECK_CODES)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--check", is_flag=True,
              help="Exit 0 if the index is fresh, 1 if stale (listing what), 2 on error. "
                   "A stat walk against the manifest: no file reads, no model.")
@click.option("--max-age", metavar="DURATION",
              help="With --check: also stale when the last build finished longer ago than "
                   "DURATION (90s, 15m, 2h, 1d; m is minutes, as in search --since).")
@click.pass_context
def status(ctx: click.Context, as_json: bool, check: bool, max_age: str | None) -> None:
    """Show what the index holds: files, chunks and errors per vault; the last build."""
    if max_age is not None and not check:
        raise click.UsageError("--max-age only applies with --check")
    if check:
        _check(ctx, as_json, max_age)
        return
    from vq.query.status import read_status, stage_text

    st = read_status(settings_from(ctx))
    if as_json:
        echo_json(st.to_json())
        return
    click.echo(f"index  {shown(st.index_dir)}")
    click.echo(f"model  {st.model} (dim {st.dim}, schema v{st.schema_version})")
    for v in st.vaults:
        note = "" if v.configured else "  (not in config: pruned at the next build)"
        if not v.root_exists and v.configured:
            note = "  (root missing: not pruned)"
        click.echo(f"vault  {shown(v.id):<12} {v.files:>6} files {v.chunks:>7} chunks "
                   f"{v.errors:>4} errors  {v.kind:<5} {shown(v.path)}{note}")
    b = st.last_build
    if b:
        click.echo(f"build  {when_built(b)}; {b['outcome']}, device {b['device'] or '-'}")
    if st.embedded < st.chunks:
        click.echo(f"embed  {st.embedded:,} of {st.chunks:,} chunks embedded (the rest match "
                   f"by text only{'' if st.lock else '; run `vq build`'})")
    if st.progress:
        click.echo(f"now    {_progress_line(st.progress)}")
    if st.stopped_rebuild is not None:
        click.echo(f"rebuild stopped with {stage_text(st.stopped_rebuild)}; the next "
                   "`vq build` continues it (this index answers until then)")
    click.echo(f"lock   {('held by ' + st.lock) if st.lock else 'free'}")
    if st.lock_warning:
        click.echo(f"warning {st.lock_warning}")
    click.echo(f"serve  {_service_line(st.service)}")
    click.echo(f"watch  {_watch_line(st.watch)}")
    for e in st.errors:
        click.echo(shown(f"error  {e['vault']}:{e['path']}: {e['error']}"))


def _progress_line(record: dict) -> str:
    """The running build, from its record: "embed: 12,400 of ~15,348 chunks (81%), ..."."""
    done, total = record.get("done", 0), record.get("total", 0)
    parts = [f"building ({record.get('phase', '?')}): "
             f"{chunks_of(done, total, bool(record.get('exact')))}"
             + (f" ({100 * done / total:.0f}%)" if total else ""),
             f"{record.get('files_done', 0):,} of {record.get('files_total', 0):,} files read"]
    if record.get("rate"):
        parts.append(f"{record['rate']:,.1f} chunks/s")
    if record.get("eta_s") is not None:
        parts.append(f"ETA {ago(record['eta_s'])}")
    return ", ".join(parts)


def _watch_line(watch: dict | None) -> str:
    if watch is None:
        return "not running (`vq watch`, or `vq serve` / `vq schedule` with watch on)"
    vaults = ", ".join(watch["vaults"]) or "no vault"
    head = (f"pid {watch['pid']}, watching {vaults}" if watch["mode"] == "watching"
            else f"pid {watch['pid']}, {watch['mode']}: {watch['reason']}")
    pending = watch["pending_count"]
    busy = "; indexing a batch" if watch["building"] else ""
    return shown(f"{head}; {pending} changed file(s) not yet indexed{busy}")


def _service_line(svc: dict | None) -> str:
    if svc is None:
        return "not running (a search starts one unless search.autostart is off or CI is set)"
    if svc["state"] == "refused":
        return f"refused: {svc['reason']} (fix: {svc['fix']})"
    if svc["state"] in ("not answering", "other code"):
        return f"{svc['state']}: pid {svc['pid']}, {svc['reason']} (fix: {svc['fix']})"
    from vq.query.service.client import running_summary

    return shown(running_summary(svc))


def _check(ctx: click.Context, as_json: bool, max_age: str | None) -> None:
    """`vq status --check`: print the verdict on stdout, exit 0 fresh or 1 stale."""
    from vq.core import store
    from vq.core.builds import last_build
    from vq.core.durations import parse_duration
    from vq.core.freshness import check_freshness

    limit = parse_duration(max_age, "--max-age") if max_age is not None else None
    settings = settings_from(ctx)
    index = store.open_for(settings)
    store.probe(index)
    result = check_freshness(settings, index, last_build(index), limit)
    if as_json:
        echo_json(result.to_json())
    else:
        for line in _freshness_lines(result, max_age):
            click.echo(shown(line))
    ctx.exit(0 if result.fresh else 1)


def _freshness_lines(result: Any, max_age: str | None) -> list[str]:
    b = result.last_build
    when = f"last build {when_built(b)}; {b['outcome']}" if b else "no build recorded"
    lines = []
    if result.fresh:
        lines.append(f"fresh: {result.files} files unchanged since the last build ({when})")
    if result.stale:
        lines.append(f"stale: {len(result.stale)} files changed since the last build ({when})")
        for item in result.stale[:SHOW_STALE]:
            where = f"{item.vault}:{item.path}" if item.path else item.vault
            lines.append(f"  {item.reason:<13} {where}")
        if len(result.stale) > SHOW_STALE:
            lines.append(f"  ... and {len(result.stale) - SHOW_STALE} more (--json lists all)")
    if result.too_old:
        age = f"finished {ago(b['age_seconds'])} ago" if b else "never ran"
        lines.append(f"stale: the last build {age}, longer than --max-age {max_age}")
    lines += [f"note: vault {v} root is missing: not checked, not pruned"
              for v in result.missing_roots]
    if result.errors:
        lines.append(f"note: {result.errors} files have read errors (see `vq status`)")
    return lines
