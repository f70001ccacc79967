"""What every page needs: the settings (re-read per request), the secrets, the mode."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vq.core.settings import Settings, load_settings, locate_config


class Host(Protocol):
    """The resident service, when the dashboard runs inside it (``vq.query.ui.hosted``)."""

    def result(self, settings: Settings, query: Any) -> Any:
        """A search on the index and model the service holds (a ``search.Result``)."""

    def info(self) -> dict[str, Any]:
        """What `vq doctor` asks the service: pid, model, device, the index it holds."""

    def touch(self) -> None:
        """A dashboard request is a request: the service's idle exit waits."""


def derive(token: str, purpose: str) -> str:
    """A secret for one purpose (the session cookie, the CSRF field) from the URL token:
    the cookie never equals the token, and neither can be computed from the other."""
    return hmac.new(token.encode(), purpose.encode(), hashlib.sha256).hexdigest()


@dataclass
class UiContext:
    """``config`` and ``overrides`` as `vq` got them; settings are loaded on each use, so a
    vault added here or by `vq vault add` shows on the next page without a restart."""

    config: str | None
    token: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool = False
    host: Host | None = None  # set when the resident service serves this dashboard

    @property
    def session(self) -> str:
        return derive(self.token, "session")

    @property
    def csrf(self) -> str:
        return derive(self.token, "csrf")

    def settings(self) -> Settings:
        return load_settings(self.config, self.overrides)

    def config_target(self) -> Path:
        """The file vault edits write: the located config, else a new user config
        (what `vq vault add` writes)."""
        from vq.core import paths

        found, _ = locate_config(self.config)
        return found or paths.user_config_file()

    def cli_args(self) -> list[str]:
        """The root options a `vq` subprocess needs to see the same index."""
        args = []
        if self.config:
            args += ["--config", str(Path(self.config).expanduser().resolve())]
        if self.overrides.get("index_dir"):
            args += ["--index-dir", str(self.overrides["index_dir"])]
        return args
