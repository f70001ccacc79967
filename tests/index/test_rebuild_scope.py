"""A rebuild covers every vault: its new tables replace the whole index, so a build
limited to some vaults (``--vault``) must not swap in an index without the others."""

from __future__ import annotations

import pytest

from tests.conftest import write_config
from tests.index.test_text_first import Recording, small_batches  # noqa: F401 - a fixture
from tests.reliability.harness import write_vault
from vq.core import store
from vq.jobs.runner import locked_build


@pytest.fixture
def two_vaults(tmp_path, test_models):
    from vq.core.settings import load_settings

    for name, seed in (("a", 1), ("b", 2)):
        write_vault(tmp_path / name, seed, files=4)
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "vaults": {name: {"path": str(tmp_path / name)} for name in ("a", "b")}})
    return config, load_settings(str(config))


def vaults_indexed(settings) -> set[str]:
    table = store.open_for(settings).chunks.to_arrow()
    return set(table.column("vault").to_pylist())


def test_a_new_chunker_rebuilds_every_vault_even_for_a_build_of_one(two_vaults,
                                                                      monkeypatch, cli):
    from vq.indexer import build as build_module

    config, settings = two_vaults
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    assert vaults_indexed(settings) == {"a", "b"}
    monkeypatch.setattr(build_module, "CHUNKER_VERSION", build_module.CHUNKER_VERSION + 1)
    res = cli("--config", config, "build", "--vault", "a")
    assert res.exit_code == 0, res.output
    assert "rebuilt every vault, not only a" in res.stderr
    assert vaults_indexed(settings) == {"a", "b"}  # was {"a"}: b vanished until a later build
    assert store.open_for(settings).meta.chunker_version == build_module.CHUNKER_VERSION


def test_rebuild_with_vault_is_refused_and_the_index_kept(two_vaults, cli):
    config, settings = two_vaults
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    version = store.open_for(settings).chunks.version
    res = cli("--config", config, "build", "--rebuild", "--vault", "a")
    assert res.exit_code == 2
    assert "--rebuild rebuilds the whole index" in res.stderr
    assert "without --vault" in res.stderr
    assert store.open_for(settings).chunks.version == version
    assert vaults_indexed(settings) == {"a", "b"}


@pytest.mark.usefixtures("small_batches")
def test_a_build_of_one_vault_continues_a_stopped_rebuild_for_every_vault(two_vaults):
    """A stage a stopped rebuild left is the whole index's: a `--vault` build must not
    throw it away (it used to be removed when that build met a new chunker) nor swap it
    in with one vault; it continues it for all of them."""
    from vq.indexer import embed

    _, settings = two_vaults
    assert locked_build(settings, encoder=Recording(settings.model)).outcome == "ok"
    first = Recording(settings.model)
    stopped = locked_build(settings, rebuild=True, encoder=first,
                           should_stop=lambda: first.batches >= 1)
    assert stopped.outcome == "interrupted"
    second = Recording(settings.model)
    done = locked_build(settings, vault_ids=("a",), encoder=second)
    assert done.outcome == "ok" and done.continued_rebuild and done.all_vaults
    assert not set(first.texts) & set(second.texts), "staged work was encoded again"
    assert vaults_indexed(settings) == {"a", "b"}
    assert store.open_for(settings).chunks.count_rows(embed.PENDING) == 0
