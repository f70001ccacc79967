"""The ONNX query encoder: exported by the build, equal to sentence-transformers, or not used."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from vq.core.onnx_encoder import OnnxEncoder, load_exported
from vq.indexer import onnx_export
from vq.query import encoders

pytestmark = pytest.mark.model
MODEL = "all-MiniLM-L6-v2"
TEXTS = [
    "how do I undo a broken deployment",
    "E4711",
    "Ünïcödé café naïve 東京 — émigré",
    "def backoff_delays(attempts, base=0.5): yield base * 2 ** n",
    "a b c",
    "the quick brown fox " * 120,  # longer than max_seq_length: truncated alike
    "   leading and trailing spaces   ",
    "What's the retry policy for flaky upstream services?",
    "kubectl rollout undo deployment/web --to-revision=3",
    "Knead the dough for ten minutes, then let it rise until doubled in size.",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, encoder):
    index_dir = tmp_path_factory.mktemp("onnx") / "index"
    onnx_export.export(str(index_dir), MODEL, encoder.model)
    return str(index_dir)


def test_onnx_vectors_match_sentence_transformers(exported, encoder):
    onnx = load_exported(exported, MODEL)
    assert isinstance(onnx, OnnxEncoder)
    want = encoder.encode(TEXTS)
    one_by_one = np.stack([onnx.encode([t])[0] for t in TEXTS])
    batched = onnx.encode(TEXTS)  # padded to the longest: the mask must hide the padding
    for got in (one_by_one, batched):
        assert got.shape == want.shape and got.dtype == np.float32
        cosine = (got * want).sum(axis=1)
        assert cosine.min() >= 0.999, cosine
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_the_marker_names_the_model_and_a_stale_export_is_not_used(exported):
    marker = json.loads((onnx_export.folder(exported) / onnx_export.MARKER).read_text())
    assert marker["model"] == MODEL and marker["dim"] == 384
    assert onnx_export.current(exported, MODEL)
    assert load_exported(exported, "another-model") is None
    assert not onnx_export.current(exported, "another-model")


def test_without_onnxruntime_the_query_side_falls_back(exported, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails like a missing one
    monkeypatch.setattr(encoders, "_QUERY", {})
    assert load_exported(exported, MODEL) is None
    enc = encoders.query_encoder(MODEL, "cpu", exported)
    assert encoders.backend(enc) == "sentence-transformers"


def test_query_encoder_prefers_the_export_on_cpu_only(exported, monkeypatch):
    monkeypatch.setattr(encoders, "_QUERY", {})
    assert encoders.backend(encoders.query_encoder(MODEL, "auto", exported)) == "onnx"
    assert encoders.backend(encoders.query_encoder(MODEL, "cpu", None)) == \
        "sentence-transformers"


def test_a_build_exports_once_and_says_so(built, build, settings, monkeypatch):
    from dataclasses import replace

    on = replace(settings, serve=replace(settings.serve, onnx_export=True))
    assert build(settings).query_onnx == "off"  # conftest turns the export off
    assert build(on).query_onnx == "exported"
    assert build(on).query_onnx == "current"  # a no-op build does not re-export
    assert load_exported(on.index_dir, MODEL) is not None


def test_a_model_that_is_not_mean_pooled_is_not_exported(encoder):
    class Pooling:
        def get_config_dict(self):
            return {"pooling_mode": "cls"}

    class Transformer:
        pass

    class Fake(list):
        tokenizer = encoder.model.tokenizer

    fake = Fake([Transformer(), Pooling()])
    assert onnx_export.exportable(fake) == "pooling is not mean pooling"
    assert onnx_export.exportable(encoder.model) is None


def test_the_export_tokenizes_without_the_deprecated_call(encoder, monkeypatch):
    """sentence-transformers 6 prints "The `tokenize` method is deprecated" into the
    user's first build: the export asks ``preprocess`` where the library has it."""
    import copy

    model = copy.copy(encoder.model)

    def deprecated(*args, **kwargs):
        raise AssertionError("tokenize called")
    monkeypatch.setattr(model, "tokenize", deprecated)
    sample = onnx_export._tokenized(model, ["a query"])
    assert sample["input_ids"].shape[0] == 1
    older = type("Older", (), {"tokenize": lambda self, texts: {"n": len(texts)}})()
    assert onnx_export._tokenized(older, ["a", "b"]) == {"n": 2}  # sentence-transformers < 6


def test_a_huge_line_is_read_from_its_prefix_with_the_same_vector(exported, encoder):
    """A 4 MB line used to be tokenized whole (hundreds of MB) for a model that reads 256
    word pieces: both encoders now cut it first (``vq.core.model_input``), and the
    vectors equal sentence-transformers' own over the whole text."""
    from vq.core.token_window import load_window

    texts = ["rollout canary index vector " * 20_000,  # 560,000 characters, one line
             "QUJDRA" * 60_000 + " base64 blob then words",  # one 360,000-character word
             "short text stays whole"]
    raw = encoder.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    onnx = load_exported(exported, MODEL)
    for got in (encoder.encode(texts), onnx.encode(texts)):
        cosine = (got * raw).sum(axis=1)
        assert cosine.min() >= 0.999, cosine
    window = load_window(MODEL)
    whole = [len(e.ids) for e in window.tokenizer.encode_batch(texts)]  # the slow way
    counted = window.counts(texts)
    assert [n > window.tokens for n in counted] == [True, False, False]  # a blob is one [UNK]
    assert counted[1:] == whole[1:] and counted[0] > window.tokens
