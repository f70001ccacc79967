"""The shared contract between vq's write side (indexer, jobs) and read side (query).

Nothing here imports torch at module level; the encoder loads it on first use.
"""

import os as _os

_os.environ.setdefault("LANCE_LOG", "error")  # lance's Rust logger warns on every table create
