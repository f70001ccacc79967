"""Finding the config file and reading it: YAML with duplicate keys refused, alias bombs
refused before anything expands them, and a file another user could have written never
obeyed. The parsed mapping is cached per file (``vq.core.config_cache``), so the thin
`vq search` path imports no YAML parser when nothing changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vq.core import config_cache, paths, yaml_bounds
from vq.core.errors import ConfigError


class DuplicateKey(Exception):
    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


_LOADER: Any = None


def _unique_key_loader() -> Any:
    """PyYAML keeps the last of two equal keys; a duplicate vault id must be an error.

    Built on first use: yaml is imported only when a config file is parsed, not
    when ``vq.core.config_cache`` already holds it (the `vq search` thin path)."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class _UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):
                seen: set = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    if key in seen:
                        raise DuplicateKey(str(key), key_node.start_mark.line + 1)
                    seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _LOADER = _UniqueKeyLoader
    return _LOADER


PROJECT = "project .vq.yaml"  # found by the upward search: its hooks need `vq hooks allow`


def locate_config(explicit: str | None, cwd: Path | None = None) -> tuple[Path | None, str]:
    """The config file to use and why: --config, VQ_CONFIG, .vq.yaml upwards, user config."""
    if explicit:
        return Path(explicit).expanduser(), "flag --config"
    if os.environ.get("VQ_CONFIG"):
        return Path(os.environ["VQ_CONFIG"]).expanduser(), "env VQ_CONFIG"
    found = paths.find_project_config((cwd or Path.cwd()).resolve())
    if found:
        return found, PROJECT
    user = paths.user_config_file()
    if user.is_file():
        return user, "user config"
    return None, "none (defaults)"


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse the YAML file into a mapping, or fail naming the file and the problem."""
    _refuse_foreign(path)
    seen = config_cache.stat(path)
    cached = config_cache.load(path, seen)
    if cached is not None:
        return cached
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), "", "config file not found",
                          "create it with `vq init`, or point --config/VQ_CONFIG at one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc}", "check the file") from None
    import yaml

    try:
        yaml_bounds.check(text)  # a YAML bomb is refused before anything expands it
        data = yaml.load(text, Loader=_unique_key_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml_bounds.TooExpanded as exc:
        raise ConfigError(str(path), "", f"refused: {exc}",
                          "remove the repeated anchors (*name) from the file") from None
    except DuplicateKey as exc:
        raise ConfigError(str(path), exc.key, f"duplicate key (line {exc.line})",
                          "each key, and each vault id, may appear once: remove or rename one",
                          ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else ""
        raise ConfigError(str(path), where, f"malformed YAML: {getattr(exc, 'problem', exc)}",
                          "fix the YAML syntax (see config.example.yaml)") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", "the top level must be a mapping of keys",
                          "see config.example.yaml")
    config_cache.save(path, seen, data)
    return data


def _refuse_foreign(path: Path) -> None:
    """A config another user owns or can write is never obeyed (``vq.core.trust``)."""
    from vq.core import trust

    try:
        st = os.stat(path)
    except OSError:
        return  # reading it says what is wrong
    problem = trust.owner_problem(st)
    if problem:
        raise ConfigError(str(path), "", f"refused: {problem}, and vq runs what a config "
                          "says (hooks) as you", trust.fix_for(path, problem))
