"""Make untrusted text safe to print on a terminal: file names, reasons, snippets.

File names and file contents come from anyone who can write to a vault; a name
like ``esc\\x1b[2J.md`` would clear the screen of whoever runs ``vq status``.
Every human-readable line that carries such text goes through ``shown``: control
characters (C0, DEL, C1), bidirectional overrides that reorder what the eye
reads, line and paragraph separators, and lone surrogates (a non-UTF-8 byte in a
file name, as ``os.fsdecode`` gives it) become visible escapes. Printable text,
accents and emoji included, is left alone. JSON output needs none of this:
``json.dumps`` escapes control characters itself.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included: a file name or a one-line field holds
# neither), DEL, C1 controls, bidi embeddings/overrides/isolates, LS/PS, surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\u2028\u2029\ud800-\udfff]")
_UNSAFE_KEEP_LINES = re.compile(_UNSAFE.pattern.replace("\x00-\x1f", "\x00-\x09\x0b-\x1f"))


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the raw byte of a non-UTF-8 name
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return {"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(ch, f"\\x{code:02x}")
    return f"\\u{code:04x}"


def shown(text: object) -> str:
    """``text`` as one terminal-safe line: every unsafe character as a visible escape."""
    return _UNSAFE.sub(_escape, str(text))


def shown_lines(text: object) -> str:
    """Like ``shown`` but keeps newlines, for multi-line output (snippets, hook output)."""
    return _UNSAFE_KEEP_LINES.sub(_escape, str(text))


def fs_name(name: str) -> str:
    """A path as a valid UTF-8 string: ``os.fsdecode``'s surrogates become ``\\xNN``.

    ``caf\\udce9.md`` (the Latin-1 name ``café.md`` read on a UTF-8 system) becomes
    ``caf\\xe9.md``; a name that is valid UTF-8 comes back unchanged.
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_utf8_name(name: str) -> bool:
    """False when ``name`` holds bytes that are not UTF-8 (lone surrogates from the OS)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
