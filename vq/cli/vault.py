"""`vq vault add|remove|list`: edit the config's vaults without hand-writing YAML."""

from __future__ import annotations

from pathlib import Path

import click

from vq.cli.shared import echo_json, settings_from
from vq.core.settings import KINDS


def _config_path(ctx: click.Context) -> Path:
    """The file being edited: the located config, else a new user config."""
    from vq.core import paths
    from vq.core.config_file import locate_config

    root = ctx.find_root().obj or {}
    found, _ = locate_config(root.get("config"))
    return found or paths.user_config_file()


@click.group()
def vault() -> None:
    """Add, remove or list the folders vq indexes. Takes effect at the next build."""


@vault.command("add")
@click.argument("vault_id")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--include", multiple=True, metavar="GLOB", help="Only files matching (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files matching (repeatable).")
@click.option("--kind", type=click.Choice(KINDS), default="notes",
              show_default=True)
@click.option("--force", is_flag=True,
              help="Allow a vault at / or at your home folder (refused without it).")
@click.pass_context
def add(ctx: click.Context, vault_id: str, path: str, include: tuple[str, ...],
        exclude: tuple[str, ...], kind: str, force: bool) -> None:
    """Add a vault: vq vault add notes ~/notes --exclude 'archive/**'.

    An Obsidian vault's templates and a Logseq graph's logseq/ folder are excluded
    unless --exclude is given (as `vq init` does)."""
    from vq.core.configedit import add_vault
    from vq.core.vault_roots import check_vault_root

    warning = check_vault_root(path, force)
    if warning:
        click.echo(f"warning: {warning}", err=True)
    target = _config_path(ctx)
    if not exclude:
        exclude = _app_excludes(Path(path).expanduser())
    add_vault(target, vault_id, path, include, exclude, kind)
    click.echo(f"added vault {vault_id!r} to {target}; run `vq build` to index it", err=True)


def _app_excludes(root: Path) -> tuple[str, ...]:
    """What a notes app keeps among the notes at ``root`` (``vq.indexer.note_apps``),
    as excludes, said on stderr."""
    from vq.indexer.note_apps import app_folders

    app, folders = app_folders(root)
    for found in folders:
        click.echo(f"note: {app}: leaving out {found.folder}/ ({found.why}); "
                   "give --exclude to choose yourself", err=True)
    return tuple(f"/{found.folder}/" for found in folders)


@vault.command("remove")
@click.argument("vault_id")
@click.pass_context
def remove(ctx: click.Context, vault_id: str) -> None:
    """Remove a vault; its rows are pruned at the next build."""
    from vq.core.configedit import remove_vault

    target = _config_path(ctx)
    remove_vault(target, vault_id)
    click.echo(f"removed vault {vault_id!r} from {target}; the next build prunes it", err=True)


@vault.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """List the configured vaults."""
    settings = settings_from(ctx)
    rows = [{"id": v.id, "path": str(v.path), "kind": v.kind, "include": list(v.include),
             "exclude": list(v.exclude), "exists": v.path.is_dir()} for v in settings.vaults]
    if as_json:
        echo_json(rows)
        return
    from vq.core.display import shown

    for r in rows:
        missing = "" if r["exists"] else "  (missing)"
        click.echo(f"{r['id']:<14} {r['kind']:<6} {shown(r['path'])}{missing}")
