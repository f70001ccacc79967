"""The shared contract between vq's write side (indexer, jobs) and read side (query).

Nothing here imports torch at module level; the encoder loads it on first use.
"""

import os as _os

# lancedb's Rust logger (env_logger, LANCEDB_LOG) warns on every table create: noise in
# cron and CI logs next to the one summary line.
_os.environ.setdefault("LANCEDB_LOG", "error")
