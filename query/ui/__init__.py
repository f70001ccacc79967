"""`vq ui`: a local dashboard (search, vaults, builds, health) served by Starlette.

Read side: it imports only ``vq.core`` and ``vq.query``. Vault edits go through
``vq.core.configedit`` (the locked, validating editor `vq vault` uses); a build runs
as a `vq build` subprocess, so the write side is never imported here.
"""
