"""`--lang py` used to match nothing and exit 1 like an honest empty search; an unknown
language is now an error that names the closest known one."""

from __future__ import annotations

import pytest

from tests.conftest import write_config
from vq.core.filetypes import LANGUAGES, closest_language


@pytest.mark.parametrize(("typed", "meant"), [
    ("py", "python"), (".rs", "rust"), ("js", "javascript"), ("golang", "go"),
    ("pyhton", "python"), ("Python", "python"), ("typescrpt", "typescript"),
    ("terraform", "hcl"), ("tf", "hcl"),
])
def test_the_closest_known_language(typed, meant):
    assert closest_language(typed) == meant


def test_nothing_close_is_no_guess():
    assert closest_language("cobol") is None
    assert "python" in LANGUAGES and "make" in LANGUAGES


def test_search_with_an_unknown_language_says_what_was_meant(settings, test_models, cli,
                                                              code_vault):
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    config = write_config(settings.config_file, {
        "index_dir": settings.index_dir, "model": test_models,
        "vaults": {"code": {"path": str(code_vault), "kind": "code"}}})
    assert locked_build(load_settings(str(config))).outcome == "ok"
    wrong = cli("--config", config, "search", "--method", "lexical", "--lang", "py",
                "retry")
    assert wrong.exit_code == 2
    assert "unknown language 'py'" in wrong.stderr
    assert "did you mean `--lang python`?" in wrong.stderr
    right = cli("--config", config, "search", "--method", "lexical", "--lang", "python",
                "retry")
    assert right.exit_code == 0, right.stderr
