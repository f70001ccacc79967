"""The ``vq`` command: a thin root that loads each subcommand only when it runs."""

from __future__ import annotations

import click

from core.cli import EXIT_CODES, LazyGroup

COMMANDS = {
    "build": ("indexer.cli:build", "Index the configured vaults (incremental, under a lock)."),
    "status": ("query.status_cli:status", "Per-vault counts, last build, errors, freshness."),
    "search": ("query.search_cli:search", "Search the index (hybrid BM25 + vectors)."),
    "vault": ("indexer.vault_cli:vault", "Add, remove or list vaults in the config file."),
    "schedule": ("jobs.cli:schedule", "Run incremental builds on a cron schedule (daemon)."),
    "jobs": ("jobs.cli:jobs", "Print or install cron and systemd units for builds."),
    "serve": ("query.serve_cli:serve", "Keep the query model warm so searches skip loading it."),
    "init": ("indexer.init_cli:init", "Write a config for this project with sensible vaults."),
    "doctor": ("query.doctor_cli:doctor", "Check settings, model, index, lock; say what to fix."),
    "mcp": ("query.mcp_cli:mcp", "Serve search to AI assistants over MCP (stdio or HTTP)."),
    "hooks": ("indexer.hooks_cli:hooks", "Check configured preprocessing hooks on a sample file."),
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
    cli(prog_name="vq")


if __name__ == "__main__":
    main()
