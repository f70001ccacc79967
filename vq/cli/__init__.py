"""The ``vq`` command: a thin root above every side that loads each subcommand only when it runs.

It lives above ``vq.query``, ``vq.indexer`` and ``vq.jobs`` so that none of them imports
another's CLI; each entry of ``COMMANDS`` is a ``"module:attr"`` string resolved on use
(a test checks that every one resolves).
"""

from __future__ import annotations

import os

import click

from vq.cli.shared import EXIT_CODES, LazyGroup
from vq.core.paths import PRIVATE_UMASK

COMMANDS = {
    "build": ("vq.cli.build:build", "Index the configured vaults (incremental, locked)."),
    "status": ("vq.cli.status:status", "Per-vault counts, last build, errors, freshness."),
    "search": ("vq.cli.search:search", "Search the index (hybrid BM25 + vectors)."),
    "vault": ("vq.cli.vault:vault", "Add, remove or list vaults in the config file."),
    "schedule": ("vq.cli.schedule:schedule", "Run incremental builds on a cron schedule (daemon)."),
    "watch": ("vq.cli.watch:watch", "Index changed files a second after they are saved."),
    "jobs": ("vq.cli.jobs:jobs", "Print or install cron and systemd units for builds."),
    "serve": ("vq.cli.serve:serve", "Answer searches from a resident process (--stop)."),
    "init": ("vq.cli.init:init", "Write a config for this project with sensible vaults."),
    "doctor": ("vq.cli.doctor:doctor", "Check settings, model, index, lock; say the fix."),
    "mcp": ("vq.cli.mcp:mcp", "Serve search to AI assistants over MCP (stdio or HTTP)."),
    "hooks": ("vq.cli.hooks:hooks", "Check configured preprocessing hooks on a sample."),
    "ui": ("vq.cli.ui:ui", "Open the local dashboard: search, vaults, builds, health."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, epilog=EXIT_CODES,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config", metavar="FILE",
              help="Config file (default: .vq.yaml here or in a parent folder, "
                   "then ~/.config/vq/config.yaml).")
@click.option("--index-dir", metavar="DIR", help="Override index_dir from the config.")
@click.version_option(package_name="vq", prog_name="vq")
@click.pass_context
def cli(ctx: click.Context, config: str | None, index_dir: str | None) -> None:
    """vq: local semantic search over folders of notes, code and documents.

    \b
    Quick start:
      vq init                         # write .vq.yaml for this project
      vq vault add notes ~/notes      # or add a folder by hand
      vq build                        # index (incremental; safe from cron)
      vq search "how do we deploy"    # hybrid search
    """
    ctx.obj = {"config": config, "overrides": {"index_dir": index_dir}}


def main() -> None:
    os.umask(PRIVATE_UMASK)  # everything vq writes is owner-only
    cli(prog_name="vq")

