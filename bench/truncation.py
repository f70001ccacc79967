"""Share of chunks the model truncates, chunked as before (characters) and now (window).

No encoding: each corpus file is chunked by the Markdown handler with the default
limits, and each chunk's embed text (``vault/path > breadcrumb`` header plus its
lines) is tokenized by the model's own tokenizer. "before" is chunker v2 (cut at
``chunk.max_chars`` only), "after" is v3 (then fitted to the window).

    python -m bench.truncation
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.common import MODEL, scratch
from vq.core.token_window import load_window
from vq.indexer.fit_window import fit_document
from vq.indexer.handlers import Limits
from vq.indexer.handlers.markdown import markdown_handler
from vq.indexer.rows import chunk_header


def share(root: Path, vault: str) -> dict:
    window = load_window(MODEL)
    if window is None:
        return {"skipped": f"no tokenizer for {MODEL}"}
    out = {"window": window.tokens}
    counts = {"before": [0, 0], "after": [0, 0]}
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        doc = markdown_handler(path.read_text(encoding="utf-8", errors="replace"), rel,
                               Limits())
        def header(c, rel=rel):
            return chunk_header(vault, rel, c)
        for label, d in (("before", doc), ("after", fit_document(doc, window, header, True))):
            texts = [header(c) + c.text for c in d.chunks]
            counts[label][0] += window.truncated(texts)
            counts[label][1] += len(texts)
    for label, (cut, total) in counts.items():
        out[label] = {"truncated": cut, "chunks": total,
                      "share": round(cut / total, 4) if total else 0.0}
    return out


def main(argv: list[str] | None = None) -> int:
    from bench import quality

    work = scratch(None, "truncation")
    result = {}
    for corpus in (quality.docker_corpus(), quality.devset_corpus(work)):
        if corpus is not None:
            result[corpus.name] = share(corpus.root, corpus.name)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
