"""`vq search`: parse, call ``vq.query.search.search``, format, exit like ripgrep."""

from __future__ import annotations

import sys

import click

from vq.core.cli import echo_json, output_options, settings_from, vault_ids


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-m", "--method", type=click.Choice(["hybrid", "lexical", "dense"]), default=None,
              help="hybrid (default): BM25 + vectors, a weighted sum of normalised scores "
              "(search.fusion); or one signal alone.")
@click.option("--vault", "vaults", multiple=True, shell_complete=vault_ids,
              help="Only this vault (repeatable).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(["notes", "code", "docs"]),
              help="Only this kind of content (repeatable).")
@click.option("--path", "paths", multiple=True, metavar="GLOB",
              help="Only files matching this gitignore-style glob (repeatable).")
@click.option("--exclude-path", "exclude_paths", multiple=True, metavar="GLOB",
              help="Leave out files matching this glob (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only notes with this frontmatter tag.")
@click.option("--since", metavar="DATE", help="Only notes dated (frontmatter) or modified since "
              "DATE: YYYY-MM-DD, or an age like 90m, 30d, 2w, 6mo (m is minutes, as in "
              "--max-age).")
@click.option("--lang", "languages", multiple=True, help="Only code in this language.")
@click.option("--symbol", "symbols", multiple=True, help="Only code chunks for this symbol.")
@click.option("--rerank", is_flag=True, help="Rerank the fused top-N with search.rerank_model.")
@click.option("--recency", is_flag=True, help="Favour recent notes: score × (0.5 + 0.5·2^(−age/"
              "half-life)), half-life search.recency_half_life_days.")
@click.option("--explain", is_flag=True, help="Show each signal's rank and score, the model, "
              "device, method, filters and candidate pools.")
@click.option("--pool", type=click.IntRange(min=1, max=1_000_000), default=None,
              help="Candidates per signal before fusion (default: search.pool).")
@output_options
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], method: str | None, **opts) -> None:
    """Search the index. Exit 0 with results, 1 with none, 2 on error."""
    from vq.query.filters import Filters
    from vq.query.search import Query
    from vq.query.search import search as run

    settings = settings_from(ctx)
    text = " ".join(query)
    filters = Filters(vaults=opts["vaults"], kinds=opts["kinds"], paths=opts["paths"],
                      exclude_paths=opts["exclude_paths"], tags=opts["tags"],
                      since=opts["since"], languages=opts["languages"],
                      symbols=opts["symbols"])
    q = Query(text, method or settings.search.method, opts["limit"] or settings.search.limit,
              filters, opts["rerank"], opts["recency"], opts["pool"])
    res = run(settings, q)
    from vq.core.display import shown

    for notice in res.notices:
        click.echo(f"notice: {shown(notice)}", err=True)
    _emit(res, text, opts["as_json"], opts["files_only"], opts["explain"])
    if res.empty_filter:
        click.echo(f"no results: the {res.empty_filter} filter matches nothing in the index",
                   err=True)
    sys.stdout.flush()
    ctx.exit(0 if res.hits else 1)


def _emit(res, text: str, as_json: bool, files_only: bool, explain: bool) -> None:
    from vq.query.output import explain_json, hit_json, render, unique_paths

    if as_json:
        hits = [hit_json(h, text, with_text=explain) for h in res.hits]
        echo_json({"hits": hits, "explain": explain_json(res)} if explain else hits)
    elif files_only:  # data for xargs when piped; made terminal-safe on a terminal
        from vq.core.display import shown

        tty = sys.stdout.isatty()
        for path in unique_paths(res):
            click.echo(shown(path) if tty else path)
    else:
        from rich.console import Console

        render(res, text, explain, Console(highlight=False))
