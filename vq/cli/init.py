"""`vq init [DIR]`: propose vaults for a project, write its config, say what to run next.

The judgement lives in ``vq.indexer.project``; this module parses, calls and
prints. The proposal (what and why) goes to stdout; notes go to stderr.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vq.cli.shared import echo_json

if TYPE_CHECKING:
    from vq.indexer.project import InitResult


@click.command()
@click.argument("directory", default=".", metavar="[DIR]",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--global", "global_", is_flag=True,
              help="Write the user config (~/.config/vq/config.yaml) with absolute paths, "
                   "instead of DIR/.vq.yaml.")
@click.option("--force", is_flag=True, help="Replace an existing config.")
@click.option("--dry-run", is_flag=True, help="Show the proposal; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the proposal and outcome as JSON.")
@click.option("--model", metavar="NAME",
              help="The embedding model to write into the config; it decides which languages "
                   "of translated docs are kept (default: the model vq would use in DIR).")
@click.option("--no-estimate", is_flag=True,
              help="Skip sizing the first build (no sample is chunked, no device probed).")
@click.pass_context
def init(ctx: click.Context, directory: Path, global_: bool, force: bool, dry_run: bool,
         as_json: bool, model: str | None, no_estimate: bool) -> None:
    """Look at DIR (default: here) and write a config with sensible vaults.

    \b
    .vault/ (ADRs, research, plans)  -> notes
    docs/ and other Markdown folders -> notes (packages/docs/ in a monorepo too)
    the source tree (.gitignore honoured, vendored/generated skipped) -> code
    PDFs and other documents         -> docs (PDFs with no text left out)
    Docs translated into languages the model does not read (docs/<lang>/,
    i18n/<lang>/, page.<lang>.md) are left out; a multilingual model keeps
    them. The first build is estimated (files, chunks, minutes on this
    machine's device) from a sample, with excludes suggested when it is long.
    The project config is DIR/.vq.yaml with its index in DIR/.vq/ (added to
    .gitignore in a git repository). An existing config is kept unless --force.
    """
    from vq.core.config_file import locate_config
    from vq.indexer.project import config_target, inspect_project, write_config

    settings = _settings_in(ctx, directory, model)
    plan = inspect_project(directory, settings.model, settings.max_document_bytes)
    plan.pin_model = model is not None
    target = config_target(plan.root, global_)
    result = write_config(plan, target, global_, force, dry_run)
    if result.written or dry_run:
        found, why = locate_config((ctx.find_root().obj or {}).get("config"), plan.root)
        if found is not None and found.resolve() != target.resolve():
            result.shadowed_by = f"{found} ({why})"
    if not no_estimate:
        _size(result, settings)
    if as_json:
        echo_json(result.to_json())
    else:
        _report(result, dry_run, global_)


def _settings_in(ctx: click.Context, directory: Path, model: str | None) -> Any:
    """The settings vq would use in DIR (model, chunk sizes, device), with ``--model``;
    a config that does not load leaves the defaults (the new config replaces it)."""
    from vq.core.errors import VqError
    from vq.core.settings import DEFAULT_MODEL, Settings, load_settings

    overrides = {"model": model} if model else {}
    try:
        return load_settings((ctx.find_root().obj or {}).get("config"), overrides,
                             cwd=directory.resolve())
    except VqError:
        return Settings(index_dir=str(directory.resolve() / ".vq"),
                        model=model or DEFAULT_MODEL)


def _size(result: InitResult, settings: Any) -> None:
    from vq.indexer.estimate import size_plan, suggest_excludes

    estimate = size_plan(result.plan, settings)
    result.estimate = estimate.to_json()
    result.suggestions = suggest_excludes(result.plan, estimate)


def _report(result: InitResult, dry_run: bool, global_: bool) -> None:
    from vq.core.display import shown

    plan = result.plan
    click.echo(f"project  {shown(plan.root)}{'  (git)' if plan.git_root else ''}")
    width = max((len(v.id) for v in plan.vaults), default=4)
    for v in plan.vaults:
        click.echo(f"vault    {v.id:<{width}}  {v.kind:<5}  {shown(v.path):<8}  {shown(v.why)}")
    if result.estimate:
        click.echo(f"estimate {_estimate_line(result.estimate)}")
    for line in result.suggestions:
        click.echo(f"exclude? {shown(line)}")
    for note in plan.notes:
        click.echo(f"note: {shown(note)}", err=True)
    if dry_run:
        click.echo(f"dry run: would write {result.config}"
                   + ("  (exists: needs --force)" if result.existed else ""))
        return
    if not result.written:
        click.echo(f"kept     {result.config} (it exists; --force replaces it)")
    else:
        click.echo(f"wrote    {result.config}")
    if result.gitignore:
        click.echo(f"ignored  .vq/ added to {result.gitignore}")
    if result.shadowed_by:
        click.echo(f"warning: in {plan.root} vq reads {result.shadowed_by}, not the new "
                   "file (see `vq doctor`)", err=True)
    click.echo(f"next:    {_next_command(plan.root, global_)}")


def _estimate_line(e: dict[str, Any]) -> str:
    """``1349 files, ~15348 chunks (~17800 texts to embed): ~48 min on cpu (...)``."""
    minutes = e["minutes"]
    took = ("under a minute" if minutes < 1 else f"~{minutes:.0f} min" if minutes < 90
            else f"~{minutes // 60:.0f} h {minutes % 60:.0f} min")
    extra = (f"; {e['unsampled_documents']} documents not sized (text known after extraction)"
             if e["unsampled_documents"] else "")
    return (f"{e['files']} files, ~{e['chunks']} chunks ({e['texts']} texts to embed): "
            f"{took} on {e['device']} ({e['device_why']}; ~{e['texts_per_second']:g} "
            f"texts/s){extra}")


def _next_command(root: Path, global_: bool) -> str:
    steps = 'vq build && vq search "your question"'
    here = Path.cwd().resolve()
    if global_ or here == root or root in here.parents:
        return steps
    return f"cd {shlex.quote(os.path.relpath(root, here))} && {steps}"
