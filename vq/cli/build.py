"""`vq build`: parse, run one locked build, report.

It lives in ``vq.jobs`` because a build is a job run under the lock
(``vq.jobs.runner``): the write side (``vq.indexer``) never imports the layer above it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from vq.cli.shared import EXIT_CODES, echo_json, settings_from, vault_ids
from vq.core.settings import DEVICES, ENGINES


@click.command(epilog=EXIT_CODES)
@click.option("--vault", "vaults", multiple=True, shell_complete=vault_ids,
              help="Only this vault (repeatable). Others are left as they are.")
@click.option("--rebuild", is_flag=True,
              help="Re-encode every vault into a fresh index beside the old one, swapped in "
                   "when done (after a model change, or to recover a damaged index; a failed "
                   "or stopped rebuild leaves the old index, and the next build continues it). "
                   "Not with --vault.")
@click.option("--wait", type=click.FloatRange(min=0), default=0, metavar="SECONDS",
              help="Wait up to SECONDS for another build's lock instead of skipping (exit 3 "
                   "on timeout).")
@click.option("--device", type=click.Choice(DEVICES), default=None,
              help="Override the configured device.")
@click.option("--engine", type=click.Choice(ENGINES), default=None,
              help="Where chunk + encode run: in this process (local) or in Ray actors "
                   "(ray, needs pip install 'vq[ray]'; see docs/ray.md). Default: engine.")
@click.option("--json", "as_json", is_flag=True, help="Print the build summary as JSON.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: only on a TTY and outside CI).")
@click.option("--progress-lines", is_flag=True,
              help="Progress as JSON lines on stderr, for a program reading it (`vq ui`).")
@click.pass_context
def build(ctx: click.Context, vaults: tuple[str, ...], rebuild: bool, wait: float,
          device: str | None, engine: str | None, as_json: bool, progress: bool | None,
          progress_lines: bool) -> None:
    """Index the configured vaults: only new and changed files are read and encoded.

    Safe to run from cron every few minutes: a build that finds another one
    running skips (exit 0, "skipped" on stderr) unless --wait is given.
    """
    from vq.core.errors import NoVaults, VqError
    from vq.indexer.progress import make_progress
    from vq.jobs.runner import Skipped, locked_build

    settings = settings_from(ctx, device=device, engine=engine)
    unknown = [v for v in vaults if settings.vault(v) is None]
    if unknown:
        raise VqError(f"unknown vault {unknown[0]!r}", "see `vq vault list`")
    if not settings.vaults:
        raise NoVaults(settings.config_file)
    if rebuild and vaults:  # its new tables would hold only those vaults
        raise VqError("--rebuild rebuilds the whole index, not one vault",
                      "run `vq build --rebuild` without --vault (the old index answers "
                      "searches until it is done)")
    bar = make_progress("lines" if progress_lines else progress)
    stop, restore = _first_ctrl_c_stops()
    try:
        result = locked_build(settings, vaults, rebuild, wait, bar, should_stop=stop.is_set)
    except VqError:
        raise
    except Exception as exc:  # e.g. a commit conflict with a second builder on shared storage
        from vq.core.error_mapping import classify, first_line

        known = classify(exc, settings.index_dir)  # a full or read-only disk, a damaged index
        if known is not None:
            raise known from exc
        raise VqError(f"build failed: {type(exc).__name__}: {first_line(exc)}",
                      "run `vq build` again: it repairs whatever this one left half-done"
                      ) from exc
    finally:
        restore()
        bar.close()
    if isinstance(result, Skipped):
        click.echo(result.line(), err=True)
        if as_json:
            echo_json({"outcome": "skipped", "holder": result.holder})
        return
    from vq.core.display import shown

    for problem in result.problems:
        click.echo(shown(f"error: {problem['vault']}:{problem['path']}: {problem['reason']}"),
                   err=True)
    if result.all_vaults:
        click.echo("note: a rebuild was due (a new chunker version, or a stopped rebuild to "
                   f"continue), so this build rebuilt every vault, not only {', '.join(vaults)}",
                   err=True)
    if result.continued_rebuild:
        click.echo(f"continued the stopped rebuild ({result.staged_files:,} files already "
                   "staged)", err=True)
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(shown(result.line()), err=True)
    if result.outcome == "interrupted":
        if result.rebuilt:  # staged (the old index answers meanwhile) or in place
            click.echo("rebuild stopped: the next `vq build` continues it from what it "
                       "committed", err=True)
        ctx.exit(130)  # the batches it committed stay; the next build continues from them


def _first_ctrl_c_stops() -> tuple[Any, Callable[[], None]]:
    """The first Ctrl-C (SIGINT) asks the build to stop after the batch in hand, so the
    chunks it encoded are committed, not encoded again next time; a second one stops
    at once. Returns (the stop event, a function that puts the old handler back)."""
    import signal
    import threading

    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return stop, lambda: None
    previous = signal.getsignal(signal.SIGINT)

    def first(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        click.echo("stopping after the batch in hand (Ctrl-C again to stop now)", err=True)

    def restore() -> None:
        signal.signal(signal.SIGINT, previous)

    signal.signal(signal.SIGINT, first)
    return stop, restore
