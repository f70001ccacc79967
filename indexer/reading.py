"""Read one file for chunking: bytes, content hash, and a decode that explains itself.

Every read of a vault file during a build is ``read_entry``: opened beneath the
vault's real root without following a link (``vq.core.confined``), never
blocking (a FIFO), a regular file only, and never more than the size the walk
saw. Another user who can write to a shared vault can swap a file for a link
to one of yours after the walk; the build then refuses that file instead of
indexing what the link leads to.

A file that cannot be read or decoded raises ``Unreadable`` with a one-line
reason that names the fix; the build records it for that file and goes on.
"""

from __future__ import annotations

import errno
import hashlib
import os

from vq.core import confined
from vq.core.walk import FileEntry

BINARY_SNIFF = 8192
CHANGED = "the next build reads it again"


class Unreadable(Exception):
    """This file cannot be indexed as it is; ``str(exc)`` is the user-facing reason.

    ``retry``: the file changed under the build (swapped, grown): its manifest row
    must not vouch for the walk's stat, so `vq status --check` says stale and the
    next build reads it again rather than trusting what it refused."""

    def __init__(self, reason: str, retry: bool = False) -> None:
        super().__init__(reason)
        self.retry = retry

    def __reduce__(self) -> tuple:  # Ray sends it to its workers: keep ``retry``
        return (Unreadable, (str(self), self.retry))


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_entry(entry: FileEntry) -> bytes:
    """The file's bytes, read as the module docstring says, or ``Unreadable``."""
    root, rel = entry.root, os.path.relpath(entry.location, entry.root or None)
    if not root:  # an entry made by hand (tests, benches): confine it to its folder
        root, rel = os.path.split(os.fspath(entry.location))
    try:
        fd = confined.open_beneath(root, rel.split(os.sep), root_is_real=bool(entry.root))
        return confined.read_regular(fd, entry.size)
    except confined.NotRegular:
        raise Unreadable("is no longer a regular file (a FIFO, device or folder took its "
                         f"place after the walk); not read, {CHANGED}", retry=True) from None
    except confined.Grew as exc:
        raise Unreadable(f"grew while the build ran ({exc.strerror}; the walk saw "
                         f"{entry.size}); not read, {CHANGED}", retry=True) from None
    except FileNotFoundError:
        raise Unreadable("deleted while the build ran; the next build drops it") from None
    except PermissionError:
        raise Unreadable("permission denied; make it readable (chmod +r) or exclude it") from None
    except OSError as exc:
        if exc.errno in confined.LINK_ERRORS or exc.errno == errno.EMLINK:
            raise Unreadable("is (or passes through) a symlink now, not the file the walk "
                             "saw; vq reads no vault file through a link, so nothing outside "
                             f"the vault is indexed; {CHANGED}", retry=True) from None
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
