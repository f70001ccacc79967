"""CLI plumbing shared by every subcommand: lazy loading, settings, errors, output options.

Every command is one module of this package (``vq/cli/build.py``, ``vq/cli/search.py``, …),
imported only when invoked, so ``vq --help``
and ``vq search --method lexical`` never import the indexer or torch.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from vq.core.errors import VqError
from vq.core.settings import MAX_RESULTS

EXIT_CODES = """\b
Exit codes:
  0  success (search: results found; build: built, or skipped because
     another build holds the lock)
  1  search found nothing / status --check found the index stale
  2  error (bad arguments or config, no index, model mismatch, ...)
  3  build --wait timed out waiting for the lock
  130 interrupted (Ctrl-C)"""


class LazyGroup(click.Group):
    """A group whose subcommands are ``"module:attr"`` strings, imported on use."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            module, attr = self.lazy[name][0].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List lazy commands with their one-line help without importing them."""
        rows = [(name, help_) for name, (_, help_) in sorted(self.lazy.items())]
        rows += [(n, c.get_short_help_str()) for n, c in self.commands.items()
                 if n not in self.lazy]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))

    def invoke(self, ctx: click.Context) -> Any:
        return guarded(lambda: super(LazyGroup, self).invoke(ctx))


def guarded(fn: Callable[[], Any]) -> Any:
    """Map domain errors to one-line messages and exit codes; Ctrl-C to 130.

    A full or read-only disk and a damaged index are recognised in whatever a
    library raised (``vq.core.error_mapping``), so every command meets them with one
    error line and a ``next:`` line, not a traceback; anything else stays a bug.
    """
    try:
        return fn()
    except VqError as exc:
        report(exc)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        quiet_pipe()
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except Exception as exc:
        from vq.core.error_mapping import classify

        known = classify(exc)
        if known is None:
            raise
        report(known)


def report(exc: VqError) -> None:
    """``error: ...`` and ``next: ...`` on stderr (terminal-safe), then exit."""
    from vq.core.display import shown

    click.echo(f"error: {shown(exc.message)}", err=True)
    if exc.fix:
        click.echo(f"next: {shown(exc.fix)}", err=True)
    sys.exit(exc.exit_code)


def quiet_pipe() -> None:
    """`vq search … | head -1`: the reader left; exit without a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    sys.exit(0)


def settings_from(ctx: click.Context, **overrides: Any) -> Any:
    """The frozen settings for this invocation: root ``--config`` plus command flags."""
    from vq.core.settings import load_settings

    root = ctx.find_root()
    obj = root.obj if isinstance(root.obj, dict) else {}
    merged = dict(obj.get("overrides", {}))
    merged.update({k: v for k, v in overrides.items() if v is not None})
    config = obj.get("config")
    # absolute, so a relative --config yields the same settings (index_dir included) here
    # and in a service started from another folder
    return load_settings(os.path.abspath(os.path.expanduser(config)) if config else None, merged)


def vault_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion for --vault: the ids in the effective config."""
    try:
        return [click.shell_completion.CompletionItem(v.id)
                for v in settings_from(ctx).vaults if v.id.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []


def output_options(fn: Callable) -> Callable:
    """``--json``, ``-n/--limit`` and ``--files`` for every command that lists things."""
    fn = click.option("--files", "files_only", is_flag=True,
                      help="Print file paths only, one per line (like rg -l); -n counts files.")(fn)
    fn = click.option("-n", "--limit", type=click.IntRange(min=1, max=MAX_RESULTS), default=None,
                      help="How many results (default: search.limit, 10).")(fn)
    fn = click.option("--json", "as_json", is_flag=True,
                      help="Print JSON on stdout (an empty result is []).")(fn)
    return fn


def echo_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))
