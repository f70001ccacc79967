"""`vq search`: ask the resident service, else search in-process; exit like ripgrep.

The thin path: until it knows the service cannot answer, this command imports
only click, the settings and the standard-library client (``vq.query.service.client``);
no lancedb, pyarrow, numpy or torch. The service runs the same ``search`` and
renders with the same functions (``vq.query.search_output``), so the output
and the exit code are those of the in-process path, which runs exactly as
before when no service answers (and, with ``search.autostart``, starts one
for the next query).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from vq.cli.shared import output_options, settings_from, vault_ids
from vq.core.settings import KINDS, MAX_RESULTS, METHODS

FILTER_OPTS = ("vaults", "kinds", "paths", "exclude_paths", "tags", "since", "languages",
               "symbols")
CONSOLE_ENV = ("NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "COLUMNS", "LINES",
               "TTY_COMPATIBLE", "TTY_INTERACTIVE")


class QueryCommand(click.Command):
    """A command whose words are a query: one that begins with "-" (``--pre``, ``-v``
    in a grep question) reads as an unknown option, so the error says how to search
    for it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if exc.possibilities:  # a typo of an option: click names the options
                raise
            import shlex  # an error's hint: the thin path imports nothing it may not use

            hint = (f"{exc.message} To search for text that begins with '-', put -- before "
                    f"it: vq search -- {shlex.quote(exc.option_name)}")
            raise click.NoSuchOption(exc.option_name, hint, ctx=exc.ctx) from None


@click.command(cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("-m", "--method", type=click.Choice(METHODS), default=None,
              help="hybrid (default): BM25 + vectors, a weighted sum of normalised scores "
              "(search.fusion); or one signal alone.")
@click.option("--vault", "vaults", multiple=True, shell_complete=vault_ids,
              help="Only this vault (repeatable).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS),
              help="Only this kind of content (repeatable).")
@click.option("--path", "paths", multiple=True, metavar="GLOB",
              help="Only files matching this gitignore-style glob (repeatable).")
@click.option("--exclude-path", "exclude_paths", multiple=True, metavar="GLOB",
              help="Leave out files matching this glob (repeatable).")
@click.option("--tag", "tags", multiple=True,
              help="Only notes with this tag (frontmatter, or #tag in the text).")
@click.option("--since", metavar="DATE", help="Only notes dated (frontmatter) or modified since "
              "DATE: YYYY-MM-DD, or an age like 90m, 30d, 2w, 6mo (m is minutes, as in "
              "--max-age).")
@click.option("--lang", "languages", multiple=True, help="Only code in this language.")
@click.option("--symbol", "symbols", multiple=True, help="Only code chunks for this symbol.")
@click.option("--rerank", is_flag=True, help="Rerank the fused top-N with search.rerank_model.")
@click.option("--recency", is_flag=True, help="Favour recent notes: score × (0.5 + 0.5·2^(−age/"
              "half-life)), half-life search.recency_half_life_days.")
@click.option("--explain", is_flag=True, help="Show each signal's rank and score, the model, "
              "device, encoder (service pid N | in-process), method, filters and pools.")
@click.option("--pool", type=click.IntRange(min=1, max=MAX_RESULTS), default=None,
              help="Candidates per signal before fusion (default: search.pool).")
@output_options
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], method: str | None, **opts) -> None:
    """Search the index. Exit 0 with results, 1 with none, 2 on error.

    Answered by your resident service when one runs (one per user, for every
    index: `vq serve`, `vq schedule`, or started by a search when
    search.autostart is on), else in-process.
    """
    settings = settings_from(ctx)
    q = {"text": " ".join(query), "method": method or settings.search.method,
         "limit": opts["limit"] or settings.search.limit, "rerank": opts["rerank"],
         "recency": opts["recency"], "pool": opts["pool"], "files": opts["files_only"],
         "filters": {k: list(v) if isinstance(v, tuple) else v
                     for k, v in ((k, opts[k]) for k in FILTER_OPTS) if v}}
    answered, usable = _via_service(ctx, settings, q, opts)
    if answered is not None:
        ctx.exit(answered)
    if usable:
        _autostart(ctx, settings)
    ctx.exit(_in_process(settings, q, opts, ask_service=usable))


def _via_service(ctx: click.Context, settings: Any, q: dict, opts: dict
                 ) -> tuple[int | None, bool]:
    """(exit code, True) when the service answered; (None, usable?) when it did not."""
    from vq.core.errors import ServiceDirUnsafe
    from vq.query.service import client

    root = ctx.find_root().obj or {}
    overrides = {k: v for k, v in (root.get("overrides") or {}).items() if v is not None}
    output = {"json": opts["as_json"], "files": opts["files_only"], "explain": opts["explain"],
              "tty": sys.stdout.isatty(), "width": _width(),
              "env": {k: os.environ[k] for k in CONSOLE_ENV if k in os.environ}}
    try:
        reply = client.search(settings, overrides, q, output)
    except ServiceDirUnsafe as exc:
        click.echo(f"notice: not using the vq service: {exc.message} ({exc.fix})", err=True)
        return None, False
    if reply is None:
        return None, True
    for line in reply.get("stderr") or []:
        click.echo(line, err=True)
    if reply.get("stdout"):
        click.echo(reply["stdout"], nl=False)
    for line in reply.get("stderr_after") or []:
        click.echo(line, err=True)
    sys.stdout.flush()
    return int(reply["exit"]), True


def _width() -> int | None:
    if not sys.stdout.isatty():
        return None
    import shutil

    return shutil.get_terminal_size().columns


def _autostart(ctx: click.Context, settings: Any) -> None:
    """Start `vq serve` detached for the next query (never under CI, or when turned off)."""
    if not settings.search.autostart or os.environ.get("CI"):
        return
    from vq.query.service.autostart import spawn

    spawn(settings, (ctx.find_root().obj or {}).get("overrides") or {})


def _in_process(settings: Any, q: dict, opts: dict, ask_service: bool) -> int:
    """Search here; the query is still encoded by a running service when one can be asked
    (one that answers for other settings spares this process loading the model)."""
    from vq.core import store
    from vq.query.search import models_for
    from vq.query.search import search as run
    from vq.query.search_output import OutputOptions, emit, exit_code, query_from, talk
    from vq.query.sources import LanceSources

    sources = LanceSources(store.open_for(settings))
    res = run(settings, query_from(q), sources, models_for(settings, sources.index, ask_service))
    before, after = talk(res)
    for line in before:
        click.echo(line, err=True)
    out = OutputOptions(opts["as_json"], opts["files_only"], opts["explain"],
                        sys.stdout.isatty())
    emit(res, q["text"], out, sys.stdout)
    for line in after:
        click.echo(line, err=True)
    sys.stdout.flush()
    return exit_code(res)
