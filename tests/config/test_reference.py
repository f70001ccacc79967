"""Every setting is declared once; the checks, the environment, the CLI's choices, the MCP
annotations and the reference are derived from that declaration."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from tests.conftest import write_config
from vq.core.errors import ConfigError
from vq.core.settings import load_settings, scalar_keys, sections
from vq.core.settings_reference import reference_markdown
from vq.core.settings_schema import KINDS, METHODS, Kind, Method

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_reference_is_generated_from_the_declarations():
    committed = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == reference_markdown(), \
        "run: python -m vq.core.settings_reference > docs/configuration.md"


def test_every_key_is_in_the_reference():
    text = reference_markdown()
    for key in scalar_keys():
        assert f"| `{key}` |" in text
    for name, cls in sections().items():
        for field in cls.__dataclass_fields__:
            assert f"| `{name}.{field}` |" in text


def test_the_cli_and_mcp_offer_the_declared_choices():
    from vq.cli.search import search
    from vq.query.mcp import server

    options = {p.name: p for p in search.params}
    assert tuple(options["method"].type.choices) == METHODS == get_args(Method)
    assert tuple(options["kinds"].type.choices) == KINDS == get_args(Kind)
    assert server.Kind is Kind and server.Method is Method


@pytest.mark.parametrize("env, value, expected", [
    ("VQ_SEARCH__LIMIT", "7", ("search", "limit", 7)),
    ("VQ_MODEL", "123", (None, "model", "123")),  # a text key keeps the raw string
    ("VQ_LOCK_PATH", "null", (None, "lock_path", None)),
    ("VQ_EXTRACT_MAX_CHARS", "1000", (None, "extract_max_chars", 1000)),
])
def test_every_declared_key_has_an_environment_override(monkeypatch, tmp_path, env, value,
                                                         expected):
    monkeypatch.setenv(env, value)
    settings = load_settings(str(write_config(tmp_path / "c.yaml", {})))
    section, key, want = expected
    holder = getattr(settings, section) if section else settings
    assert getattr(holder, key) == want
    assert settings.sources[f"{section}.{key}" if section else key] == f"env {env}"


@pytest.mark.parametrize("data, key, words", [
    ({"ray": {"batch_size": 0}}, "ray.batch_size", "must be at least 1"),
    ({"ray": {"num_gpus_per_worker": 0}}, "ray.num_gpus_per_worker", "must be more than 0"),
    ({"vector_dtype": "int8"}, "vector_dtype", "is not one of float16, float32"),
    ({"vaults": {"n": {"path": ".", "kind": "poems"}}}, "vaults.n.kind", "is not one of"),
    ({"vaults": {"n": {"path": ".", "gitignore": "sometimes"}}}, "vaults.n.gitignore",
     "expected bool"),
])
def test_bounds_and_choices_come_from_the_declaration(tmp_path, data, key, words):
    with pytest.raises(ConfigError) as err:
        load_settings(str(write_config(tmp_path / "bad.yaml", data)))
    assert err.value.key == key and words in err.value.message and err.value.fix
