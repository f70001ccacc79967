"""An int8 screening pass for the resident vector matrix: the exact top k, a quarter of the bytes.

The flat scan of ``vq.query.service.snapshot`` is one float32 matrix-vector product;
at 100k chunks x 384 dimensions that reads 150 MB per query and is bound by
memory bandwidth (~9-12 ms on two cores, the largest part of a warm hybrid
search). Here every vector is also held as int8 (per-dimension scales, 38 MB),
and onnxruntime's ``MatMulInteger`` (AVX2 integer kernels) scores all of them
in ~2-3 ms. Only the rows that can still belong to the exact top k are then
scored in float32.

"Can still belong" is a bound, not a guess, so the result is the exact scan's.
With per-dimension scales ``s``, a row ``v`` is ``x = v*s`` in integer units,
stored as ``b = round(x)``; the query ``q`` becomes ``u = q/s`` (so ``q.v = u.x``),
quantised to ``u'``. Then, per row,

    |u.x - u'.b|  <=  |u - u'| |b|  +  |u| |x - b|   =: eps

(Cauchy-Schwarz on both error terms). Every row whose upper bound
``u'.b + eps`` reaches the k-th largest lower bound ``u'.b - eps`` is a
candidate: any other row scores below at least k rows. A small float slack
covers float32 rounding. When the candidates are more than ``MAX_SHARE`` of the
rows (vectors too alike for the bound to separate them), ``candidates`` says
None and the caller does the full float32 scan.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

MIN_ROWS = 32_768   # below this the float32 scan is ~3 ms: the screen would not pay
MAX_SHARE = 0.25    # more candidates than this share of rows: the full scan is cheaper
CHUNK_ROWS = 65_536  # rows quantised per step: bounded extra memory while loading
SLACK = 1e-4        # float32 rounding of the scores on either side of the bound
# The matrix's int8 levels: 7 bits, not 8. Without VNNI, x86 multiplies uint8 x int8 with
# VPMADDUBSW, whose int16 sum of two products saturates at 32767 (255 * 127 * 2 does not
# fit; 255 * 63 * 2 does): onnxruntime's own "reduce_range" for the same reason.
LEVELS = 63


@dataclasses.dataclass
class Screen:
    session: Any             # onnxruntime session: uint8 query x int8 matrix -> int32 scores
    scale: np.ndarray        # per-dimension scale s (float32, dim)
    int_norm: np.ndarray     # |b| per row
    round_err: np.ndarray    # |x - b| per row


def build(vectors: np.ndarray, threads: int = 2) -> Screen | None:
    """The screen of a unit-row float32 matrix; None when it is too small to pay
    or onnxruntime is missing (the float32 scan answers alone, as before)."""
    if len(vectors) < MIN_ROWS:
        return None
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    rows, dim = vectors.shape
    scale = (LEVELS / np.maximum(np.abs(vectors).max(axis=0), 1e-12)).astype(np.float32)
    codes = np.empty((dim, rows), dtype=np.int8)  # transposed: MatMulInteger's B is (dim, rows)
    int_norm = np.empty(rows, dtype=np.float32)
    round_err = np.empty(rows, dtype=np.float32)
    for start in range(0, rows, CHUNK_ROWS):
        x = vectors[start:start + CHUNK_ROWS] * scale
        b = np.clip(np.rint(x), -LEVELS, LEVELS)
        codes[:, start:start + len(x)] = b.T
        int_norm[start:start + len(x)] = np.linalg.norm(b, axis=1)
        round_err[start:start + len(x)] = np.linalg.norm(x - b, axis=1)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["q", "codes", "zero"], ["scores"])], "screen",
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, dim])],
        [helper.make_tensor_value_info("scores", TensorProto.INT32, [1, rows])],
        initializer=[numpy_helper.from_array(codes, "codes"),
                     numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return Screen(session, scale, int_norm, round_err)


def candidates(screen: Screen, q: np.ndarray, k: int, allowed: np.ndarray | None = None
               ) -> np.ndarray | None:
    """Rows (sorted) that contain the exact top ``k`` of ``allowed`` (None: all rows) for
    the unit query ``q``; None when the bound cannot narrow them to ``MAX_SHARE``."""
    found = bounds(screen, q)
    if found is None:
        return None
    approx, eps = found
    pool = None if allowed is None else np.sort(allowed)
    if pool is not None:
        approx, eps = approx[pool], eps[pool]
    n = len(approx)
    if n <= k:
        return np.arange(n) if pool is None else pool
    kth = np.partition(approx - eps, n - k)[n - k]
    keep = np.flatnonzero(approx + eps >= kth)
    if len(keep) > MAX_SHARE * n:
        return None
    return keep if pool is None else pool[keep]


def bounds(screen: Screen, q: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Every row's int8 score of ``q`` and its error bound: the exact float score lies
    within ``approx +- eps``. None for a zero query (every score ties)."""
    u = (q / screen.scale).astype(np.float32)
    step = float(np.abs(u).max()) / 127.0
    if step == 0.0:
        return None
    levels = np.rint(u / step)
    approx = screen.session.run(None, {"q": (levels + 128).astype(np.uint8)[None, :]})[0][0]
    approx = approx.astype(np.float32) * np.float32(step)
    u_err = np.float32(np.linalg.norm(u - levels * step))
    eps = u_err * screen.int_norm + np.float32(np.linalg.norm(u)) * screen.round_err
    return approx, eps + np.float32(SLACK)
