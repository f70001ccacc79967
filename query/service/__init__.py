"""The resident search service: one process per user that keeps indexes open and models
loaded once.

- ``server``: the Unix-socket transport and its guarantees (owner-only, peer uid, limits);
- ``handler``: what a request does (a whole search, an encode, a rerank);
- ``client``: the standard-library client the thin `vq search` tries first;
- ``autostart``: starts a detached `vq serve` from a search that found none;
- ``slots``: one per index the service holds (settings, open tables, snapshot, lock);
- ``snapshot``: an index's rows and vectors held in memory, refreshed per build;
- ``int8_screen``: a quantised first pass over the in-memory vectors (exact top k).
"""
