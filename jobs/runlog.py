"""The scheduler's log: one line per event on stderr, optionally a rotated file.

Text lines carry their own timestamp (cron mail and plain files have none);
``--json-logs`` writes one JSON object per line for journald and log shippers,
with the counts as fields so nobody has to parse the text. APScheduler's own
logger is routed here at ERROR only: the events users care about (a tick
skipped because the previous run is still going, a missed tick) are reported
by vq in its own format.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import time
from pathlib import Path
from typing import Any, TextIO

LOGGER = "vq.schedule"


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%dT%H:%M:%S%z")


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "event", "message", ...fields}`` per line."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(record.created)),
            "level": record.levelname.lower(),
            "event": getattr(record, "event", "log"),
            "message": record.getMessage(),
        }
        data.update(getattr(record, "fields", {}))
        if record.exc_info:
            data["traceback"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)


class RunLog:
    """Where the daemon says what it did; ``event`` is the only way it writes."""

    def __init__(self, json_lines: bool = False, log_file: str | None = None,
                 max_bytes: int = 10_000_000, backups: int = 3,
                 stream: TextIO | None = None) -> None:
        self.logger = logging.getLogger(LOGGER)
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False
        formatter = JsonFormatter() if json_lines else TextFormatter()
        self.handlers: list[logging.Handler] = [logging.StreamHandler(stream or sys.stderr)]
        if log_file:
            path = Path(log_file).expanduser()
            path.parent.mkdir(parents=True, exist_ok=True)
            self.handlers.append(logging.handlers.RotatingFileHandler(
                path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"))
        aps = logging.getLogger("apscheduler")
        aps.setLevel(logging.ERROR)
        aps.propagate = False
        for handler in self.handlers:
            handler.setFormatter(formatter)
            self.logger.addHandler(handler)
            aps.addHandler(handler)

    def event(self, event: str, message: str, level: int = logging.INFO,
              exc_info: bool = False, **fields: Any) -> None:
        self.logger.log(level, message, exc_info=exc_info,
                        extra={"event": event, "fields": fields})

    def close(self) -> None:
        """Detach and close the handlers (the log file), so a second daemon starts clean."""
        aps = logging.getLogger("apscheduler")
        for handler in self.handlers:
            self.logger.removeHandler(handler)
            aps.removeHandler(handler)
            handler.close()
