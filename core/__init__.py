"""The shared contract between vq's write side (indexer, jobs) and read side (query).

Nothing here imports torch at module level; the encoder loads it on first use.
"""
