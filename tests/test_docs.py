"""The docs keep up with the code: every command, option and settings key is documented.

A command or option that nobody wrote down is one a user cannot find; a settings key
missing from ``config.example.yaml`` is one nobody knows the default of. These tests
read the real click tree and the real settings declaration, so a new option or key
fails here until README.md, docs/*.md or the example config mentions it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import click
import pytest
import yaml

from tests.conftest import REPO
from vq.cli import cli
from vq.core import settings as settings_module

# click adds these to every command; they document themselves
IMPLICIT_OPTIONS = {"--help"}
# Settings fields that are not config keys but filled in by the loader: where the config
# came from, which layer each value came from, which hooks await `vq hooks allow`
NOT_CONFIG_KEYS = {"config_file", "sources", "hooks_need_trust"}
# a vault's id is its key under `vaults:`, not a field inside it
NOT_VAULT_KEYS = {"id"}


def docs_text() -> str:
    """README.md and every docs page, as one text to search."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages)


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` with its path of names, subcommands included."""
    ctx = click.Context(group, info_name="vq")
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def long_options(command: click.Command) -> set[str]:
    """The command's long option names (``--json``, ``--no-serve``), hidden ones left out."""
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            names |= {o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")}
    return names - IMPLICIT_OPTIONS


def mentioned(option: str, text: str) -> bool:
    """``--json`` counts, ``--json-logs`` does not count for ``--json``."""
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def test_the_walk_sees_every_command_and_its_options():
    """Guard for the tests below: a walk that found nothing would pass them vacuously."""
    found = dict(commands(cli))
    assert {("build",), ("search",), ("vault", "add"), ("jobs", "systemd")} <= set(found)
    assert {"--rebuild", "--wait"} <= long_options(found[("build",)])
    assert "--exclude-path" in long_options(found[("search",)])


def test_every_command_is_documented():
    text = docs_text()
    missing = [" ".join(("vq", *path)) for path, _ in commands(cli)
               if " ".join(("vq", *path)) not in text]
    assert not missing, f"undocumented commands (README.md or docs/*.md): {missing}"


def test_every_long_option_is_documented():
    text = docs_text()
    missing = sorted(f"vq {' '.join(path)} {option}".replace("vq  ", "vq ")
                     for path, command in [((), cli), *commands(cli)]
                     for option in long_options(command) if not mentioned(option, text))
    assert not missing, f"undocumented options (README.md or docs/*.md): {missing}"


def field_names(cls: type) -> set[str]:
    """The declared fields of a settings class (a dataclass or a pydantic model)."""
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls)}
    return set(cls.model_fields)  # type: ignore[attr-defined]


def sections() -> dict[str, type]:
    """Top-level keys whose value is a settings section of its own (``search:``, ``ray:``)."""
    return settings_module.sections()


@pytest.fixture(scope="module")
def example() -> dict:
    return yaml.safe_load((REPO / "config.example.yaml").read_text(encoding="utf-8"))


def test_every_top_level_key_is_in_the_example_config(example):
    keys = field_names(settings_module.Settings) - NOT_CONFIG_KEYS
    assert {"index_dir", "search", "vaults"} <= keys
    missing = sorted(keys - set(example))
    assert not missing, f"config.example.yaml lacks the top-level keys {missing}"


def test_every_section_key_is_in_the_example_config(example):
    found = sections()
    assert {"search", "chunk", "schedule"} <= set(found)
    missing = sorted(f"{name}.{key}" for name, cls in found.items()
                     for key in field_names(cls) - set(example.get(name) or {}))
    assert not missing, f"config.example.yaml lacks the section keys {missing}"


def test_every_vault_key_is_in_the_example_config(example):
    shown = set().union(*(set(v) for v in example["vaults"].values()))
    missing = sorted(field_names(settings_module.Vault) - NOT_VAULT_KEYS - shown)
    assert not missing, f"no vault in config.example.yaml shows the keys {missing}"


PRODUCT = ("core", "indexer", "jobs", "query", "vq")
# what belongs in docs/decisions.md or git history, not in the product's code
HISTORY = re.compile(r"\bissue\s*#?\d+|bench/results/|\b(?:ndcg|mrr|recall)@\d+", re.I)


def test_product_code_points_to_the_ledger_not_to_issues_or_results():
    """Comments say why; the measurements behind a choice live in docs/decisions.md
    (cite ``docs/decisions.md#<entry>``), and which issue asked for it lives in git."""
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
             for top in PRODUCT for path in sorted((REPO / top).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, "cite docs/decisions.md instead:\n" + "\n".join(found)


def test_the_history_pattern_catches_what_it_is_for():
    assert all(HISTORY.search(s) for s in ("(issue 37)", "Issue #12", "nDCG@10 0.91",
                                           "bench/results/2026-12-05.md", "recall@100"))
    assert not any(HISTORY.search(s) for s in ("docs/decisions.md#section-vectors",
                                               "an issue with the lock", "tissue 3"))
