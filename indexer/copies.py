"""Folders of pages that repeat what is read elsewhere, which ``vq init`` leaves out or
names: indexed beside the pages they copy, every hit would come twice.

* **Generated copies**: pages that open with a generator's mark (``DO NOT EDIT``,
  ``@generated``): the Rust book's ``nostarch/``, the print edition's chapters built
  from ``src/``.
* **Moved-page stubs**: pages that are mostly one repeated text (the Rust book's
  ``2018-edition/``, ``first-edition/`` and ``second-edition/``: 262 pages of "the second
  edition of the book is no longer distributed ... check out the current version", each
  under a real chapter's title, ranked above the chapter it points to; its
  ``redirects/``, a summary and an example each beside the notice, are kept).
* **Copies named after their original** (``notebooks_v1/`` beside ``notebooks/``): which
  one is current vq cannot know, so they are only named, in a note.

Each test reads at most ``SAMPLE`` pages of a folder, the first ``HEAD_BYTES`` of each
(a stub is short; a real page's first kilobytes are its own).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from vq.core.inline_markup import markdown_text
from vq.core.walk import marked_generated
from vq.indexer.handlers.markdown import body_start

SAMPLE = 12            # pages of a folder read
HEAD_BYTES = 4096      # of each
MIN_PAGES = 5          # a folder of fewer pages is never judged a stub folder
SHARED_CHARS = 40      # a repeated paragraph this long or longer counts
COPY_FILES, COPY_SHARE = 5, 0.8  # a folder copies another: 5 file names and 80% shared

Read = Callable[[str], str]  # a page's path from the project root -> its first bytes as text

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def by_top(pages: Iterable[str], skip: Iterable[str] = ()) -> dict[str, list[str]]:
    """Pages grouped by their top-level folder (pages at the root are no folder's)."""
    left_out = set(skip)
    out: dict[str, list[str]] = {}
    for page in pages:
        top, slash, _ = page.partition("/")
        if slash and top not in left_out:
            out.setdefault(top, []).append(page)
    return out


def generated(pages: list[str], read: Read) -> bool:
    """Most of the folder's sampled pages (two in three, three at least) carry a
    generator's mark in their first lines."""
    sample = sorted(pages)[:SAMPLE]
    marked = sum(marked_generated(read(p)[:1024]) for p in sample)
    return len(sample) >= 3 and 3 * marked >= 2 * len(sample)


def stubs(pages: list[str], read: Read) -> bool:
    """Most of the folder's sampled pages (two in three, ``MIN_PAGES`` at least) are
    mostly (two thirds of their text) paragraphs that most of them repeat, links and
    numbers aside: a license footer on every page is a small part of each; a moved-page
    notice is all of it."""
    sample = sorted(pages)[:SAMPLE]
    if len(sample) < MIN_PAGES:
        return False
    paragraphs = [set(_paragraphs(read(p))) for p in sample]
    seen = Counter(p for found in paragraphs for p in found)
    common = {p for p, n in seen.items() if 3 * n >= 2 * len(sample) and len(p) >= SHARED_CHARS}
    repeated = 0
    for found in paragraphs:
        body = sum(len(p) for p in found)
        repeated += bool(body) and 3 * sum(len(p) for p in found & common) >= 2 * body
    return 3 * repeated >= 2 * len(sample)


def _paragraphs(text: str) -> list[str]:
    """A page's paragraphs as compared: no front matter or headings, as rendered (a link
    is its text), numbers as 0, spaces folded, lower case."""
    lines = text.splitlines()
    out = []
    for block in "\n".join(lines[body_start(lines):]).split("\n\n"):
        kept = [ln for ln in block.strip().splitlines() if not ln.lstrip().startswith("#")]
        plain = _SPACE.sub(" ", _DIGITS.sub("0", markdown_text(" ".join(kept)))).strip()
        if plain:
            out.append(plain.lower())
    return out


def copy_notes(names_in: dict[str, set[str]]) -> list[str]:
    """A note for each folder that holds a copy of the one it is named after
    (``notebooks_v1/`` beside ``notebooks/``, ``docs-old/`` beside ``docs/``: most file
    names shared): the build would index both, so every hit there comes twice. Which is
    current vq cannot know, so it says so and leaves the choice to the user."""
    out = []
    for folder in sorted(names_in):
        parent, _, name = folder.rpartition("/")
        for sep in "-_. ":
            base, found, suffix = name.rpartition(sep)
            original = f"{parent}/{base}" if parent else base
            if not (found and base and suffix) or original not in names_in:
                continue
            shared = len(names_in[folder] & names_in[original])
            if shared >= max(COPY_FILES, COPY_SHARE * len(names_in[folder])):
                out.append(f"{folder}/ has {shared} of the {len(names_in[original])} file "
                           f"names of {original}/ (an older copy?): both are indexed, so each "
                           f"hit may come twice; exclude one (\"/{folder}/\") if so")
            break
    return out
