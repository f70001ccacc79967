"""`vq doctor`'s checks: ``checks`` (settings, model, vaults, lock, service), ``tables``
(the index's tables and indexes) and ``window`` (chunks cut by the model's token window)."""
