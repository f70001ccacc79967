"""Search filters as SQL predicates, applied inside each candidate pool (before top-k).

Filtering after fusion would let the best hits outside the filter eat the k
slots and return too few results; every filter here goes into LanceDB's
``where(..., prefilter=True)`` for both the BM25 and the vector search.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass

import pathspec

from vq.core.durations import is_duration, parse_duration
from vq.core.errors import VqError
from vq.core.filetypes import LANGUAGES, closest_language
from vq.core.store import Index, path_filter, sql_in, sql_str


@dataclass(frozen=True)
class Filters:
    vaults: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()          # gitignore-style globs, relative to the vault root
    exclude_paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: str | None = None             # YYYY-MM-DD or an age: frontmatter date, else mtime
    languages: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()

    def active(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v}


class EmptyFilter(VqError):
    """A filter matched nothing in the index; exits 1 like an empty search."""

    exit_code = 1


def parse_since(value: str, now: float | None = None) -> tuple[str, float]:
    """``2024-05-01``, or an age in the one duration grammar (``30d``, ``2w``, ``6mo``,
    ``90m`` = minutes) → (ISO date, epoch seconds): frontmatter dates compare by day,
    file times by the exact moment (a date: its midnight UTC)."""
    value = value.strip()
    if value[-1:].isalpha() and is_duration(value):  # a bare number is no age
        moment = (time.time() if now is None else now) - parse_duration(value, "--since")
        try:
            day = dt.datetime.fromtimestamp(moment, dt.timezone.utc).date()
        except (OverflowError, OSError, ValueError):
            raise VqError(f"--since {value!r} reaches too far back",
                          "use a smaller age such as 30d or 10y, or a date like 2020-01-01"
                          ) from None
        return day.isoformat(), moment
    try:
        day = dt.date.fromisoformat(value[:10])
    except ValueError:
        raise VqError(f"--since {value!r} is not a date",
                      "use YYYY-MM-DD or an age such as 30d, 2w, 6mo (m is minutes)") from None
    stamp = dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc).timestamp()
    return day.isoformat(), stamp


def predicates(index: Index, f: Filters) -> dict[str, str]:
    """One SQL predicate per active filter, named so an empty result can say which."""
    out: dict[str, str] = {}
    if f.vaults:
        out["vault"] = sql_in("vault", f.vaults)
    if f.kinds:
        out["kind"] = sql_in("kind", f.kinds)
    if f.languages:
        check_languages(f.languages)
        out["lang"] = sql_in("language", f.languages)
    if f.symbols:
        out["symbol"] = " OR ".join(f"symbol = {sql_str(s)} OR symbol LIKE {sql_str('%.' + s)}"
                                    for s in f.symbols)
    if f.tags:
        out["tag"] = " OR ".join(f"array_has(tags, {sql_str(t.lower().lstrip('#'))})"
                                 for t in f.tags)
    if f.since:
        day, stamp = parse_since(f.since)
        out["since"] = (f"(doc_date IS NOT NULL AND doc_date >= {sql_str(day)}) OR "
                        f"(doc_date IS NULL AND mtime >= {stamp})")
    if f.paths or f.exclude_paths:
        out["path"] = _path_predicate(index, f)
    return out


def glob_spec(globs: tuple[str, ...], option: str) -> pathspec.PathSpec:
    """The globs as one gitignore-style spec; a glob pathspec rejects (``'\\'``: a
    dangling escape) is a one-line error naming it, not a traceback."""
    for glob in globs:
        try:
            pathspec.GitIgnoreSpec.from_lines([glob])
        except ValueError as exc:
            raise VqError(f"{option} {glob!r} is not a valid glob: {exc}",
                          "write a gitignore-style pattern such as 'notes/**/*.md'; a "
                          "backslash escapes the next character") from None
    return pathspec.GitIgnoreSpec.from_lines(globs)


def _path_predicate(index: Index, f: Filters) -> str:
    """Globs are matched against the manifest in Python (exact gitignore semantics)."""
    include = glob_spec(f.paths, "--path") if f.paths else None
    exclude = glob_spec(f.exclude_paths, "--exclude-path")
    data = index.files.search().select(["vault", "path"]).limit(None).to_arrow().to_pydict()
    keys = [(v, p) for v, p in zip(data["vault"], data["path"], strict=True)
            if (include is None or include.match_file(p)) and not exclude.match_file(p)]
    if not keys:
        return "false"
    return " OR ".join(f"({p})" for p in path_filter(keys, batch=10_000))


def check_languages(languages: tuple[str, ...]) -> None:
    """An unknown language would match nothing and look like "no results": refuse it and
    name the closest known one (``py`` -> ``python``)."""
    for name in languages:
        if name in LANGUAGES:
            continue
        guess = closest_language(name)
        hint = f"did you mean `--lang {guess}`? " if guess else ""
        raise VqError(f"unknown language {name!r}",
                      f"{hint}known languages: {', '.join(sorted(LANGUAGES))}")


def combine(preds: dict[str, str]) -> str | None:
    return " AND ".join(f"({p})" for p in preds.values()) or None


def explain_empty(index: Index, preds: dict[str, str]) -> str | None:
    """Name the filter that matches no chunk at all, if one does."""
    for name, pred in preds.items():
        if pred == "false" or not index.chunks.count_rows(pred):
            return name
    if len(preds) > 1 and not index.chunks.count_rows(combine(preds)):
        return " + ".join(preds)
    return None
