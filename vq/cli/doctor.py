"""`vq doctor`: print the checks from ``vq.query.doctor.checks``; exit 1 when any failed.

Settings are loaded by the checks themselves (not ``settings_from``), so a
broken config is a ✗ line with its fix rather than an error exit.
"""

from __future__ import annotations

import click

from vq.cli.shared import echo_json

EPILOG = """\b
Exit codes:
  0  nothing failed (warnings allowed)
  1  at least one check failed (✗): each has a "next:" line
  2  doctor itself could not run (bad arguments)"""


@click.command(epilog=EPILOG)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.option("--no-model", is_flag=True,
              help="Skip the device and model checks (the only ones that import torch).")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, no_model: bool) -> None:
    """Check config, environment, device, model, vaults, index, lock; say what to fix.

    One line per check: ✓ fine, ⚠ works but needs attention, ✗ broken, – skipped.
    Every ⚠ and ✗ is followed by a "next:" line. Doctor writes nothing.
    """
    from vq.core.display import shown
    from vq.query.doctor.checks import SYMBOLS, run_checks

    root = ctx.find_root().obj or {}
    report = run_checks(root.get("config"), root.get("overrides"), model=not no_model)
    if as_json:
        echo_json(report.to_json())
    else:
        width = max(len(c.name) for c in report.checks)
        for c in report.checks:
            click.echo(f"{SYMBOLS[c.status]} {c.name:<{width}}  {shown(c.detail)}")
            if c.next:
                click.echo(f"  {'':<{width}}next: {shown(c.next)}")
    ctx.exit(0 if report.ok else 1)
