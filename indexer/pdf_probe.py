"""Which PDFs of a project hold no text, so that ``vq init`` does not propose them.

A project's PDFs are often drawings: a logo in four colours, a brand kit, a diagram
exported for slides. Proposed as documents, each is an error at every build ("no
extractable text"), printed again by every cron run. Init opens each PDF and reads
its first ``PAGES`` pages, as the build would; one with no text there is left out,
and init says so (a scan is indexed through an OCR hook, which the note names).

Bounded like every read: a file is read beneath the project without following links
and only up to ``max_document_bytes``; probing stops after ``BUDGET_S`` seconds, and
what was not probed stays proposed (the build reports it if it has no text).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vq.core import confined
from vq.indexer.handlers.base import HandlerError
from vq.indexer.handlers.pdf import has_text

PAGES = 5        # a cover, a blank and a title page before the text are common
BUDGET_S = 5.0   # `vq init` stays a command that answers in seconds


@dataclass(frozen=True)
class Probe:
    textless: tuple[str, ...]  # paths relative to the project root
    unprobed: int = 0          # left unopened when the time budget ran out


def probe_pdfs(root: Path, paths: Sequence[str], max_bytes: int, budget_s: float = BUDGET_S,
               clock: Callable[[], float] = time.monotonic) -> Probe:
    """The PDFs among ``paths`` whose first pages hold no text."""
    deadline = clock() + budget_s
    textless: list[str] = []
    for n, rel in enumerate(paths):
        if clock() > deadline:
            return Probe(tuple(textless), len(paths) - n)
        if _textless(root, rel, max_bytes):
            textless.append(rel)
    return Probe(tuple(textless))


def _textless(root: Path, rel: str, max_bytes: int) -> bool:
    """True only when the file was read and has no text: a file that cannot be read is
    left to the build, which says what is wrong with it and how to fix it."""
    try:
        fd = confined.open_beneath(str(root), rel.split("/"))
        return not has_text(confined.read_regular(fd, max_bytes), PAGES)
    except (OSError, ValueError, HandlerError):
        return False
