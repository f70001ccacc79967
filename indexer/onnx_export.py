"""Export the index's query encoder to ONNX beside the tables, at the end of a build.

Why: a search without the resident service otherwise imports torch and
sentence-transformers (~4 s) to encode one query. The read side
(``vq.core.onnx_encoder``) runs this export with onnxruntime + tokenizers.

The graph is the sentence-transformers pipeline itself (transformer, mean
pooling, normalize) traced from the weights the build already loaded, so the
vectors agree with the ones the chunks were encoded with (cosine >= 0.999 is
tested). Only models of exactly that shape are exported; anything else is left
to sentence-transformers on the query side. Layout, in ``index_dir/query-encoder``:
``model.onnx``, ``tokenizer.json`` and ``vq-onnx.json`` (written last: the
read side trusts the folder only when it names the index's model).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

FOLDER = "query-encoder"
# The ONNX model a CPU build bulk-encodes with ("fp32" or "int8", see
# ``vq.core.onnx_encoder.VARIANTS``). fp32: int8 is faster but ranked the dev sets
# worse than its rule allows (docs/decisions.md#onnx-bulk-encoder).
BULK_VARIANT = "fp32"
MARKER = "vq-onnx.json"
FORMAT = 1
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
SUPPORTED = ("Transformer", "Pooling", "Normalize")


def folder(index_dir: str) -> Path:
    return Path(index_dir) / FOLDER


def current(index_dir: str, model: str) -> bool:
    """True when the folder holds an export of ``model`` in this format."""
    try:
        marker = json.loads((folder(index_dir) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (marker.get("model") == model and marker.get("format") == FORMAT
            and marker.get("variant", "fp32") == BULK_VARIANT)


def exportable(st_model: Any) -> str | None:
    """None when the model is transformer + mean pooling (+ normalize), else why not."""
    names = [type(m).__name__ for m in st_model]
    if not names or names[0] != "Transformer" or any(n not in SUPPORTED for n in names):
        return f"modules {names} are not transformer + pooling + normalize"
    if len(names) < 2 or names[1] != "Pooling" or _pooling_mode(st_model[1]) != "mean":
        return "pooling is not mean pooling"
    if not getattr(st_model.tokenizer, "is_fast", False):
        return "the tokenizer has no tokenizer.json (not a fast tokenizer)"
    return None


def _pooling_mode(pooling: Any) -> str:
    """"mean" for mean pooling, in the config of sentence-transformers 3 and later alike."""
    config = pooling.get_config_dict()
    mode = config.get("pooling_mode")
    if mode is not None:
        return mode if isinstance(mode, str) else "+".join(mode)
    chosen = [k for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
    return "mean" if chosen == ["pooling_mode_mean_tokens"] else "+".join(chosen)


def export(index_dir: str, model_name: str, st_model: Any) -> Path:
    """Trace ``st_model`` (a float32 CPU copy of it) to ONNX; return the folder."""
    out = folder(index_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).unlink(missing_ok=True)  # from here on readers fall back, never mix
    clear_temps(out)  # a killed export's leftovers (the build lock makes them dead)
    try:
        return _export(out, model_name, st_model)
    except BaseException:
        clear_temps(out)  # a full disk must not keep what it failed to write
        raise


def clear_temps(out: Path) -> None:
    """Remove partial files (``*.tmp-PID``) of an export that failed or was killed: on a
    full disk they used to eat every byte freed later."""
    for partial in out.glob("*.tmp-*"):
        if partial.is_dir():
            shutil.rmtree(partial, ignore_errors=True)
        else:
            partial.unlink(missing_ok=True)


def _tokenized(st_model: Any, texts: list[str]) -> Any:
    """The model's inputs for ``texts``: ``preprocess`` where sentence-transformers has
    it (6.x, where ``tokenize`` prints a deprecation line into the user's build output),
    else ``tokenize`` (3.x to 5.x, which the dependency range allows)."""
    preprocess = getattr(st_model, "preprocess", None)
    return preprocess(texts) if preprocess is not None else st_model.tokenize(texts)


def _export(out: Path, model_name: str, st_model: Any) -> Path:
    import torch

    cpu = copy.deepcopy(st_model).float().to("cpu").eval()
    sample = _tokenized(cpu, ["a query", "a somewhat longer sample text for tracing"])
    args = tuple(sample[name] for name in INPUTS if name in sample)
    names = [name for name in INPUTS if name in sample]
    tmp = out / f"model.onnx.tmp-{os.getpid()}"
    with torch.no_grad(), _quiet():
        torch.onnx.export(_Pipeline(cpu, names), args, str(tmp), dynamo=False,
                          input_names=names, output_names=["embedding"], opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names})
    os.replace(tmp, out / "model.onnx")
    _save_tokenizer(cpu.tokenizer, out)
    if BULK_VARIANT == "int8":
        quantize(str(out.parent))
    # "variant": the model builds and queries use, so both encode alike
    marker = {"format": FORMAT, "model": model_name, "inputs": names, "variant": BULK_VARIANT,
              "dim": _dimension(cpu),
              "max_seq_length": int(cpu.max_seq_length), "torch": torch.__version__}
    tmp_marker = out / f"{MARKER}.tmp-{os.getpid()}"
    tmp_marker.write_text(json.dumps(marker, indent=2), encoding="utf-8")
    os.replace(tmp_marker, out / MARKER)
    return out


def quantize(index_dir: str) -> Path:
    """An int8 copy of the export (dynamic quantisation of its weights), beside it."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = folder(index_dir)
    tmp = out / f"model.int8.onnx.tmp-{os.getpid()}"
    quantize_dynamic(str(out / "model.onnx"), str(tmp), weight_type=QuantType.QInt8)
    os.replace(tmp, out / "model.int8.onnx")
    return out / "model.int8.onnx"


def _dimension(st_model: Any) -> int:
    dim = getattr(st_model, "get_embedding_dimension", None) or \
        st_model.get_sentence_embedding_dimension
    return int(dim())


class _Pipeline:
    """Wrap the sentence-transformers modules as one ``forward(ids, mask, types)``."""

    def __new__(cls, st_model: Any, names: list[str]) -> Any:
        import torch

        class Pipeline(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = st_model

            def forward(self, *tensors: Any) -> Any:
                return self.model(dict(zip(names, tensors, strict=True)))["sentence_embedding"]

        return Pipeline().eval()


def _save_tokenizer(tokenizer: Any, out: Path) -> None:
    staging = out / f"tokenizer.tmp-{os.getpid()}"
    tokenizer.save_pretrained(str(staging))
    os.replace(staging / "tokenizer.json", out / "tokenizer.json")
    shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def _quiet() -> Any:
    """The TorchScript exporter warns about advanced indexing it handles correctly here."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def after_build(settings: Any, encoder: Any, model_name: str) -> str:
    """The build's last step: export when missing or stale; a one-line outcome.

    ``encoder`` is the build's loaded ``Encoder`` (or a callable returning it,
    so a no-op build loads the model only when the export is missing). Never
    raises: a failed export leaves searches on sentence-transformers.
    """
    from vq.core.paths import is_uri

    if not settings.serve.onnx_export or is_uri(settings.index_dir):
        return "off"
    if current(settings.index_dir, model_name):
        return "current"
    try:
        enc = encoder() if callable(encoder) else encoder
        st_model = getattr(enc, "model", None)
        why = "the encoder is not sentence-transformers" if st_model is None else \
            exportable(st_model)
        if why:
            return f"skipped: {why}"
        export(settings.index_dir, model_name, st_model)
    except Exception as exc:  # noqa: BLE001 - the index is fine without it
        return f"failed: {type(exc).__name__}: {str(exc)[:200]}"
    return "exported"
