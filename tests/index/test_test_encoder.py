"""The test encoder: deterministic, normalised, no torch, and only where tests allow it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO
from vq.core.encoder import shared_model
from vq.core.errors import ModelLoadError


def test_same_text_same_vector_shared_words_lie_closer(test_models):
    enc = shared_model("encoder", test_models, "auto")
    a, b, c, again = enc.encode(["roll back the release", "release rollback plan",
                                 "bake bread at 250 degrees", "roll back the release"])
    assert enc.dim == 384 and a.shape == (384,) and a.dtype == np.float32
    assert np.array_equal(a, again)
    assert np.allclose([np.linalg.norm(v) for v in (a, b, c)], 1.0)
    assert float(a @ b) > float(a @ c)


def test_refused_unless_tests_allow_it(monkeypatch):
    monkeypatch.delenv("VQ_TEST_MODELS", raising=False)
    with pytest.raises(ModelLoadError, match="VQ_TEST_MODELS=1"):
        shared_model("encoder", "vq-test/hash-384", "auto")


@pytest.mark.parametrize("name", ["vq-test/hash", "vq-test/hash-x", "vq-test/other-384"])
def test_misspelled_test_models_say_how_to_spell_them(test_models, name):
    with pytest.raises(ModelLoadError, match="vq-test/hash-<dim>"):
        shared_model("encoder", name, "auto")


def test_a_build_with_it_never_imports_torch(test_models, tmp_path, vault):
    config = tmp_path / "c.yaml"
    config.write_text(f"index_dir: {tmp_path / 'index'}\nmodel: {test_models}\n"
                      f"vaults:\n  notes:\n    path: {vault}\n")
    probe = ("import sys\nfrom vq.cli import cli\ntry:\n    cli(sys.argv[1:], prog_name='vq')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "print('RESULT', code, 'torch' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe, "--config", str(config), "build"],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert "RESULT 0 False" in out.stderr, out.stderr[-800:]
    assert "4 new" in out.stderr
