"""CPU encoders for the build: sentence-transformers (torch) vs the ONNX export, fp32 and
int8 (dynamic quantisation), on the texts a build of the dev sets encodes.

For each encoder: chunks/s over the same texts (``--rounds`` interleaved runs, the
fastest kept; ``--sample`` of them on a busy machine), cosine to sentence-transformers'
vectors over every text (min and mean), and nDCG@10
of hybrid search on each dev set with the index built and queried by that encoder
(the build's vectors replayed from the throughput run, so nothing is encoded twice).
The rule the build follows (``vq.indexer.onnx_export.BULK_VARIANT``): ONNX fp32 must
reach cosine >= 0.999; int8 is kept only where it is faster and its nDCG@10 stays
within 0.005 of sentence-transformers' on every dev set.

    python -m bench.encoders [--devsets NAME...] [--sample N] [--rounds N] [--threads N]
                             [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import quality
from bench.common import (
    MODEL,
    RandomEncoder,
    log,
    prepare_env,
    publish,
    scratch,
    settings_for,
    write_config,
)


def dev_corpora(work: Path, names: list[str] | None = None) -> list[Any]:
    found = [c for c in (quality.devset_corpus(work), quality.contributing_corpus(work)) if c]
    return [c for c in found if not names or c.name in names]


def config_for(corpus: Any, base: Path) -> Path:
    return write_config(base / "vq.yaml", base / "index",
                        {corpus.name: {"path": corpus.root, "kind": corpus.kind,
                                       "include": list(corpus.include)}})


def build_texts(corpus: Any, base: Path) -> list[str]:
    """Exactly what a clean build of the corpus hands its encoder."""
    from vq.jobs.runner import locked_build

    recorder = RandomEncoder()
    shutil.rmtree(base / "capture", ignore_errors=True)  # a reused --work: build from scratch
    locked_build(settings_for(config_for(corpus, base / "capture")), encoder=recorder)
    return recorder.texts


def encoders(work: Path, threads: int) -> dict[str, Any]:
    """sentence-transformers on CPU, and the ONNX export of the same weights."""
    from vq.core.encoder import Encoder
    from vq.core.onnx_encoder import load_exported
    from vq.indexer import onnx_export

    st = Encoder(MODEL, "cpu", batch_size=64)
    folder = work / "onnx"
    onnx_export.export(str(folder), MODEL, st.model)
    onnx_export.quantize(str(folder))
    out = {"sentence-transformers": st}
    for variant in ("fp32", "int8"):
        out[f"onnx {variant}"] = load_exported(str(folder), MODEL, threads, variant)
    return out


class Replay:
    """An encoder answering from vectors already computed (the throughput run's)."""

    def __init__(self, real: Any, vectors: dict[str, np.ndarray]) -> None:
        self.real, self.vectors = real, vectors
        self.dim, self.device, self.model_name = real.dim, real.device, MODEL
        self.batch_size = 64

    def encode(self, texts: list[str], progress: Any = None) -> np.ndarray:
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.real.encode(missing), strict=True))
        return np.stack([self.vectors[t] for t in texts])


def throughput(encs: dict[str, Any], texts: list[str], rounds: int
               ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Chunks/s per encoder over ``texts``: ``rounds`` interleaved runs, the best kept;
    and each encoder's vectors of ``texts`` (from its last run)."""
    best: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for round_ in range(1, rounds + 1):
        for name, enc in encs.items():
            log(f"encoders: {name}, {len(texts)} texts, round {round_}")
            start = time.perf_counter()
            vectors[name] = enc.encode(texts)
            took = time.perf_counter() - start
            best[name] = max(best.get(name, 0.0), len(texts) / took)
            log(f"encoders: {name}: {len(texts) / took:.2f} texts/s")
    return {k: round(v, 1) for k, v in best.items()}, vectors


def timed_once(saved: Path, encs: dict[str, Any], texts: list[str], rounds: int
               ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """``throughput``, kept in ``saved`` (under ``--work``): a rerun after a failure in
    the nDCG part reuses the timings and vectors instead of encoding for an hour."""
    meta = saved / "rates.json"
    if meta.exists():
        kept = json.loads(meta.read_text(encoding="utf-8"))
        if kept["texts"] == texts and kept["rounds"] == rounds:
            log(f"encoders: timings and vectors from {saved}")
            return kept["rates"], {n: np.load(saved / f"{i}.npy")
                                   for i, n in enumerate(kept["rates"])}
    rates, vectors = throughput(encs, texts, rounds)
    saved.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(rates):
        np.save(saved / f"{i}.npy", vectors[name])
    meta.write_text(json.dumps({"texts": texts, "rounds": rounds, "rates": rates}),
                    encoding="utf-8")
    return rates, vectors


def ndcg(corpus: Any, base: Path, enc: Any) -> float:
    """Hybrid nDCG@10 with the index built by ``enc`` and the queries encoded by it."""
    from vq.jobs.runner import locked_build
    from vq.query import encoders as query_encoders

    shutil.rmtree(base, ignore_errors=True)
    config = config_for(corpus, base)
    settings = settings_for(config)
    assert locked_build(settings, encoder=enc).outcome == "ok"
    query_encoders._QUERY[query_encoders.load_key(MODEL, "cpu", str(base / "index"))] = enc
    queries = quality.read_queries(corpus.queries)
    scored = quality.run_vq_method(corpus, config, ("-m", "hybrid"), queries, base)
    return round(float(scored["ndcg@10"]), 4)


def run(work: Path, threads: int, names: list[str] | None = None, sample: int = 0,
        rounds: int = 2) -> dict:
    corpora = dev_corpora(work, names)
    if not corpora:
        return {"skipped": "no Node.js docs (apt-get install nodejs) for the dev sets"}
    texts_by = {c.name: build_texts(c, work / c.name) for c in corpora}
    texts = sorted({t for ts in texts_by.values() for t in ts})
    timed = random.Random(5).sample(texts, sample) if 0 < sample < len(texts) else texts
    encs = encoders(work, threads)
    load_before = _load()
    rates, vectors = timed_once(work / "timed", encs, timed, rounds)
    if timed is not texts:  # a sample was timed: cosine and nDCG need every text
        for name, enc in encs.items():
            log(f"encoders: {name}, all {len(texts)} texts for cosine and nDCG")
            vectors[name] = enc.encode(texts)
    reference = vectors["sentence-transformers"]
    out: dict[str, Any] = {"texts": len(texts), "timed_texts": len(timed), "rounds": rounds,
                           "threads": threads, "load_avg_before": load_before,
                           "load_avg_after_timing": _load(), "encoders": {}}
    for name, enc in encs.items():
        cos = np.sum(vectors[name] * reference, axis=1)
        row = {"chunks_per_s": rates[name],
               "vs_sentence_transformers": round(rates[name] / rates["sentence-transformers"], 3),
               "cosine_min": round(float(cos.min()), 5), "cosine_mean": round(float(cos.mean()), 5),
               "ndcg@10": {}}
        replay = Replay(enc, dict(zip(texts, vectors[name], strict=True)))
        for corpus in corpora:
            log(f"encoders: nDCG of {name} on {corpus.name}")
            row["ndcg@10"][corpus.name] = ndcg(corpus, work / "q" / corpus.name, replay)
        out["encoders"][name] = row
    out["kept"] = keep(out["encoders"])
    return out


def _load() -> list[float]:
    """The 1/5/15-minute load averages: the machine may be shared while this runs."""
    return [round(x, 2) for x in os.getloadavg()]


def keep(rows: dict[str, dict]) -> str:
    """The rule, set before measuring: fp32 needs cosine >= 0.999; int8 replaces it only
    when faster with every dev set's nDCG@10 within 0.005 of sentence-transformers'."""
    st = rows["sentence-transformers"]
    kept = "sentence-transformers"
    fp32 = rows["onnx fp32"]
    if fp32["cosine_min"] >= 0.999 and fp32["chunks_per_s"] > st["chunks_per_s"]:
        kept = "onnx fp32"
    int8 = rows["onnx int8"]
    close = all(abs(int8["ndcg@10"][k] - v) <= 0.005 for k, v in st["ndcg@10"].items())
    if close and int8["chunks_per_s"] > rows[kept]["chunks_per_s"]:
        kept = "onnx int8"
    return kept


def markdown(res: dict) -> str:
    if "skipped" in res:
        return f"encoders: skipped ({res['skipped']})\n"
    sets = sorted(next(iter(res["encoders"].values()))["ndcg@10"])
    lines = [f"{res['texts']} texts (what a build of the dev sets encodes; chunks/s over "
             f"{res['timed_texts']} of them, best of {res['rounds']}), {res['threads']} "
             f"threads; load average {res.get('load_avg_before')} before timing, "
             f"{res.get('load_avg_after_timing')} after; kept: **{res['kept']}**", "",
             "| encoder | chunks/s | vs torch | cosine min / mean | "
             + " | ".join(f"nDCG@10 {s}" for s in sets) + " |",
             "|---|---|---|---|" + "---|" * len(sets)]
    for name, row in res["encoders"].items():
        lines.append(f"| {name} | {row['chunks_per_s']} | {row['vs_sentence_transformers']} | "
                     f"{row['cosine_min']} / {row['cosine_mean']} | "
                     + " | ".join(str(row["ndcg@10"][s]) for s in sets) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from vq.core.onnx_encoder import cpu_count

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--threads", type=int, default=cpu_count(), help="onnxruntime threads")
    ap.add_argument("--devsets", nargs="*", help="nodejs-dev, nodejs-contributing (default: both)")
    ap.add_argument("--sample", type=int, default=0, help="texts timed (default: all)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved timed runs per encoder")
    args = ap.parse_args(argv)
    prepare_env()
    res = run(scratch(args.work, "encoders"), args.threads, args.devsets, args.sample,
              args.rounds)
    return publish(markdown(res), res, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
