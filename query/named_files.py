"""Files a query names: a query that *is* a note's name finds that note.

A person who types "Properties", "Embed files" or "Glossary" asks for the note of that
name, as Obsidian's quick switcher or a code search tool's file match would read it;
BM25 and the vectors read a short name as a weak query, and Obsidian's help ranked
release notes that mention properties above the Properties page
(docs/decisions.md#named-files). A version name ("v1.4") stays weak: BM25 splits it
into tokens every release note holds, so the note it names is rarely a candidate.

A query names a file when, compared as ``plain`` (case, ``_``/``-`` as spaces, runs of
spaces folded), the whole query is a prose file's title, stem or file name, or a code
file's name with its extension (a code file's bare stem is a symbol's business,
``vq.query.code_rank``). The named file's best chunk among the candidates is
multiplied by ``code_rank.DEFINES``, the prior a named definition gets. A multiplier,
never a place: a chunk no signal scored stays at 0. Nothing is looked up beyond the
pools: a chunk they missed would join the fusion at 0 on every signal (each pool is
its signal's top k), and 0 times anything is 0.
"""

from __future__ import annotations

import re

from vq.query.code_rank import DEFINES

NAME_CHARS = 200  # a longer query is a question, not a name
_SPACES = re.compile(r"\s+")

FileKey = tuple[str, str]  # (vault, path)


def plain(text: str) -> str:
    """A name as compared: case, ``_`` and ``-`` as spaces, runs of spaces folded."""
    return _SPACES.sub(" ", text.replace("_", " ").replace("-", " ")).strip().lower()


def path_forms(path: str, code: bool) -> tuple[str, ...]:
    """The names a file answers to by its path: a code file its file name, prose its
    file name and its stem."""
    name = path.rsplit("/", 1)[-1]
    return (plain(name),) if code else (plain(name), plain(name.rsplit(".", 1)[0]))


def wanted(query: str) -> str:
    """The name a query could be ("" for a longer query: a question names nothing)."""
    return plain(query) if len(query) <= NAME_CHARS else ""


def names(name: str, row: dict) -> bool:
    """Whether ``name`` (``wanted``) names the file of a chunk ``row``, by its title or
    its path."""
    code = row.get("kind") == "code"
    return bool(name) and (name in path_forms(row["path"], code)
                           or not code and name == plain(row.get("title") or ""))


def adjust(order: list[str], rows: dict[str, dict], query: str) -> list[str]:
    """The best chunk of each file ``query`` names, times ``DEFINES``; the order that
    comes back follows the scores, ties by id."""
    name = wanted(query)
    best: dict[FileKey, str] = {}
    for doc_id in order if name else ():  # best first: a file's first chunk is its best
        row = rows[doc_id]
        key = (row["vault"], row["path"])
        if key not in best and names(name, row):
            best[key] = doc_id
    if not best:
        return order
    for doc_id in best.values():
        rows[doc_id]["_score"] *= DEFINES
        rows[doc_id]["_signals"]["named"] = {"factor": DEFINES}
    return sorted(order, key=lambda i: (-rows[i]["_score"], i))
