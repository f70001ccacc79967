"""`vq doctor`'s checks: ``checks`` (settings, model, vaults, lock, service), ``tables``
(the index's tables and indexes), ``window`` (chunks cut by the model's token window) and
``trust`` (who can read the index, who steers vq's hooks)."""
