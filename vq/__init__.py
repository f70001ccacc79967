"""vq: local semantic search over folders of notes, code and documents.

The one import name vq installs: ``vq.core`` (the shared contract), ``vq.indexer``
(write side), ``vq.query`` (read side), ``vq.jobs`` (running builds) and ``vq.cli``
(the command root). Importing ``vq`` itself loads nothing heavy.
"""
