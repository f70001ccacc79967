"""docs/configuration.md, generated from the declarations in ``vq.core.settings_schema``.

``python -m vq.core.settings_reference > docs/configuration.md`` rewrites it; a test fails
when the committed file differs, so the reference can never drift from the code.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, get_args, get_origin

from vq.core.settings import _hints, _number, config_fields, sections
from vq.core.settings_schema import Settings, Vault

INTRO = """# Configuration reference

Generated from `core/settings_schema.py` by `python -m vq.core.settings_reference`; do not
edit by hand (a test fails when it differs). `config.example.yaml` is a commented example.

Where vq looks: `--config FILE`, else `$VQ_CONFIG`, else `.vq.yaml` in the current folder
or a parent, else `~/.config/vq/config.yaml`. Precedence: flag > environment > file >
default. Every key can be set in the environment as `VQ_KEY`, a section's key as
`VQ_SECTION__KEY` (`VQ_SEARCH__POOL=200`). Relative paths are relative to the config file;
`index_dir` defaults to `.vq/` beside a project config, else the user's data folder.
Unknown keys, wrong types, bad choices, a number out of bounds, a vault without `path`, a
duplicate vault id or malformed YAML fail with exit 2, naming the file, the key and the fix.
`vq doctor` shows each effective value and where it came from.
"""


def reference_markdown() -> str:
    parts = [INTRO, _table("Top-level keys", Settings, "", skip=set(sections())),
             _table("Each vault (`vaults: {ID: {...}}`)", Vault, "vaults.ID.", skip=set())]
    for name, cls in sections().items():
        parts.append(_table(f"`{name}:`", cls, f"{name}.", skip=set()))
    return "\n".join(parts)


def _table(title: str, cls: type, prefix: str, skip: set[str]) -> str:
    rows = [f"## {title}\n", "| key | type | default | what it is |", "|---|---|---|---|"]
    hints = _hints(cls)
    for name, f in config_fields(cls).items():
        if name in skip:
            continue
        rows.append(f"| `{prefix}{name}` | {_type(hints[name])} | {_default(f)} | "
                    f"{f.metadata.get('doc', '')}{_bounds(f.metadata)} |")
    return "\n".join(rows) + "\n"


def _type(hint: Any) -> str:
    if get_origin(hint) is Literal:
        return " \\| ".join(f"`{a}`" for a in get_args(hint))
    text = getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
    return text.replace("|", "\\|").replace("NoneType", "null")


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return "required"
    return "null" if value is None else f"`{value!r}`".replace("|", "\\|")


def _bounds(meta: Any) -> str:
    said = []
    if meta.get("between"):
        said.append("from {} to {}".format(*map(_number, meta["between"])))
    if meta.get("min") is not None:
        said.append(f"at least {_number(meta['min'])}")
    if meta.get("above") is not None:
        said.append(f"more than {_number(meta['above'])}")
    if meta.get("max") is not None:
        said.append(f"at most {_number(meta['max'])}")
    return f" ({', '.join(said)})" if said else ""


if __name__ == "__main__":
    print(reference_markdown(), end="")
