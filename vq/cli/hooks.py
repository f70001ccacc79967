"""`vq hooks check`: run each configured preprocessing hook on a sample and report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from vq.cli.shared import echo_json, settings_from

if TYPE_CHECKING:
    from vq.indexer.hooks import HookCheck

EPILOG = """\b
Exit codes:
  0  every hook that had a sample file ran and printed text
  1  at least one hook failed (exit status, timeout, no output)
  2  error (bad config, a --sample with no hook for its extension)"""
_SYMBOLS = {"ok": "✓", "failed": "✗", "no sample": "–"}


@click.group()
def hooks() -> None:
    """Preprocessing hooks: commands that turn other formats into text for vq.

    Configure them per extension in the config file, e.g.
    hooks: {".odt": "pandoc -t gfm {path}"}.
    """


@hooks.command(epilog=EPILOG)
@click.option("--sample", "samples", multiple=True, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Try the hook for FILE's extension on FILE (repeatable). "
                   "Default: the first file with that extension in the vaults.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.pass_context
def check(ctx: click.Context, samples: tuple[Path, ...], as_json: bool) -> None:
    """Run each configured hook once on a sample file; show its exit status, time,
    output size, first line and chunk count. Nothing is indexed or written."""
    from vq.indexer.hooks import check_hooks

    settings = settings_from(ctx)
    if not settings.hooks:
        click.echo("no hooks configured (add a hooks: section to the config)", err=True)
    results = check_hooks(settings, samples)
    if as_json:
        echo_json([r.to_json() for r in results])
    else:
        for result in results:
            _print(result)
    ctx.exit(1 if any(r.status == "failed" for r in results) else 0)


def _print(result: HookCheck) -> None:
    """Sample names and hook output are untrusted: printed through ``shown``."""
    from vq.core.display import shown

    click.echo(f"{_SYMBOLS[result.status]} {result.extension}  {shown(result.command)}")
    run = result.run
    if run is None:
        click.echo("    no file with this extension in the vaults; try --sample FILE")
        return
    click.echo(f"    sample: {shown(result.sample)}")
    if run.ok:
        info = result.to_json()
        click.echo(f"    exit 0  {run.seconds:.2f}s  {info['chars']} chars  "
                   f"{result.chunks} chunks  first line: {shown(info['first_line'])}")
    else:
        click.echo(f"    {shown(run.problem)}")


@hooks.command()
@click.argument("config_file", required=False,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def allow(ctx: click.Context, config_file: Path | None) -> None:
    """Trust this project's config to run its hooks (as direnv's `allow`).

    A .vq.yaml found by searching parent folders runs its hooks only after this:
    `cd cloned-repo && vq build` must not run a stranger's commands. The file's
    path and content hash are recorded; after any edit, read it and allow it again.
    """
    from vq.core import trust
    from vq.core.display import shown
    from vq.core.settings import load_settings

    settings = (load_settings(str(config_file)) if config_file is not None
                else settings_from(ctx))
    path = settings.config_file
    if path is None:
        raise click.UsageError("no config file in use: nothing to allow")
    trust.trust(path)
    for ext, command in settings.hooks.items():
        click.echo(f"allowed {ext}: {shown(command)}")
    click.echo(f"trusted {shown(str(path))} as it is now; edit it and allow it again",
               err=True)
