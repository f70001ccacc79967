"""Jupyter notebooks: the cells rendered as Markdown, so headings become breadcrumbs.

A notebook is JSON (nbformat 4): read as text it would be quotes, escapes and
base64 images; left unclaimed (as before), a repository's tutorials and examples
were not searchable at all. Markdown cells are kept as written, code cells become
fenced blocks in the kernel's language, raw cells plain text; outputs are left
out (images, tables and logs that can be megabytes, and the code that made them is
there). The Markdown handler then chunks the result. As for HTML, line numbers
are those of the rendered Markdown; the title is the first H1, else the file stem.

Why not nbformat: it validates against the schema and pulls in jsonschema and
fastjsonschema to do so; vq needs the cells' type and source, from the standard
library's ``json``.
"""

from __future__ import annotations

from typing import Any

from vq.indexer.handlers.base import Document, HandlerError, Limits, join_blocks, load_json
from vq.indexer.handlers.html import fence, markdown_document


def notebook_handler(data: bytes, relpath: str, limits: Limits) -> Document:
    """Chunk a notebook's bytes (the registry marks this handler as binary)."""
    return markdown_document(extract_notebook(data), relpath, limits)


def extract_notebook(data: bytes) -> str:
    """The notebook's cells as one Markdown text."""
    notebook = load_json(data, "a Jupyter notebook", "save it again from Jupyter, or exclude it")
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise HandlerError("not an nbformat 4 notebook (no cell list); convert it with "
                           "`jupyter nbconvert --to notebook`, or exclude it")
    language = _language(notebook.get("metadata"))
    blocks = [_render(cell, language) for cell in notebook["cells"] if isinstance(cell, dict)]
    return join_blocks(blocks)


def _language(metadata: Any) -> str:
    """The kernel's language for code fences (``python`` when the notebook does not say)."""
    if isinstance(metadata, dict):
        for key, field in (("kernelspec", "language"), ("language_info", "name")):
            section = metadata.get(key)
            if isinstance(section, dict) and isinstance(section.get(field), str):
                return section[field].strip().lower() or "python"
    return "python"


def _render(cell: dict, language: str) -> str:
    source = cell.get("source", "")
    text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) \
        else source if isinstance(source, str) else ""
    kind = cell.get("cell_type")
    if kind == "code":
        return fence(text, language)
    return text.strip("\n") if kind in ("markdown", "raw") else ""
