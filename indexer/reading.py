"""Read one file for chunking: bytes, content hash, and a decode that explains itself.

A file that cannot be read or decoded raises ``Unreadable`` with a one-line
reason that names the fix; the build records it for that file and goes on.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

BINARY_SNIFF = 8192


class Unreadable(Exception):
    """This file cannot be indexed as it is; ``str(exc)`` is the user-facing reason."""


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise Unreadable("deleted while the build ran; the next build drops it") from None
    except PermissionError:
        raise Unreadable("permission denied; make it readable (chmod +r) or exclude it") from None
    except IsADirectoryError:
        raise Unreadable("became a folder while the build ran") from None
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None


def decode(data: bytes) -> str:
    """UTF-8 (a BOM is dropped); binary content and other encodings are refused."""
    if b"\x00" in data[:BINARY_SNIFF]:
        raise Unreadable("binary content (NUL bytes); exclude it or give it another extension")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise Unreadable(f"not valid UTF-8 (line {line}, byte {exc.start}); "
                         "convert it, e.g. `iconv -f latin1 -t utf-8`") from None
