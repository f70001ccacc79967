"""How big a first build will be, before it runs: files, chunks and minutes.

`vq init` walks the proposed vaults (the build's own walk), chunks a sample of
the files with the build's own chunkers and window fit (a tokenizer, no model),
and scales the sample's chunks per byte to every file. The texts a build
encodes are the chunks plus each split section's whole text; the minutes are
those texts over a rate per device. The rates are constants, not a benchmark
run at init time; docs/init-doctor.md says where each comes from and how to
measure it again (``python -m bench.speed --sections throughput``).

HTML pages, notebooks and canvases are sampled like text, each reader apart: their
bytes are mostly markup, cell outputs and JSON, so a chunks-per-byte ratio holds
only among files of one reader, and parsing one takes milliseconds. PDFs are counted, not
sampled: their text is only known once extracted, seconds a file, which is a
build's work.
"""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, cast

from vq.core.encoder import cpu_count
from vq.core.errors import VqError
from vq.core.settings import Settings, Vault
from vq.core.settings_schema import Kind
from vq.core.walk import FileEntry, discover_for, suffix
from vq.indexer.engine import FileWork, chunk_files, limits_for
from vq.indexer.extract_cache import FileChunker
from vq.indexer.fit_window import fitter
from vq.indexer.handlers import BINARY_HANDLERS, handler_for
from vq.indexer.project import Plan, Proposal

SAMPLE_FILES = 40  # per vault and reader: enough for a chunks-per-byte ratio, quick to chunk
QUICK_EXTRACTION = frozenset({"html", "notebook", "canvas", "docx"})  # sampled like text
# Texts encoded per second: see docs/init-doctor.md ("How vq init sizes a build").
CPU_TEXTS_PER_CORE = 12.7   # bench.speed throughput, build's own timer, per core
CPU_SCALING_CORES = 8       # beyond this many cores no gain is assumed
ACCELERATOR_TEXTS = {"cuda": 1000.0, "mps": 150.0}  # assumptions, not measured here
LONG_MINUTES = 10           # an estimate above this suggests excludes


@dataclass
class Estimate:
    files: int = 0
    chunks: int = 0
    texts: int = 0          # chunks plus split sections' whole texts: what is encoded
    unsampled: int = 0      # documents counted but not sampled (need extraction)
    device: str = "cpu"
    device_why: str = ""
    rate: float = 0.0       # texts per second on ``device``
    folders: list[tuple[str, int, int]] = field(default_factory=list)  # (dir, files, chunks)

    @property
    def minutes(self) -> float:
        return self.texts / self.rate / 60 if self.rate else 0.0

    @property
    def long(self) -> bool:
        return self.minutes > LONG_MINUTES

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "chunks": self.chunks, "texts": self.texts,
                "unsampled_documents": self.unsampled, "device": self.device,
                "device_why": self.device_why, "texts_per_second": round(self.rate, 1),
                "minutes": round(self.minutes, 1), "long": self.long,
                "biggest_folders": [{"path": p, "files": f, "chunks": c}
                                    for p, f, c in self.folders]}


def estimate_build(settings: Settings, vaults: Sequence[Vault], device: tuple[str, str],
                   root: Path) -> Estimate:
    """Size the first build of ``vaults`` with ``settings``' model and chunk sizes on
    ``device`` (name, why); folders are named relative to ``root``. Reads at most
    ``SAMPLE_FILES`` files per vault."""
    sized = replace(settings, vaults=tuple(vaults))
    found = discover_for(sized)
    chunker = FileChunker(sized, limits_for(sized), cached=False)
    fit = fitter(sized.model)
    kinds: dict[str, str] = {v.id: v.kind for v in vaults}
    out = Estimate(files=len(found.files), device=device[0], device_why=device[1],
                   rate=texts_per_second(device[0]))
    per_file: dict[str, float] = {}
    hooked = frozenset(sized.hooks)
    groups: dict[tuple[str, str | None], list[FileEntry]] = defaultdict(list)
    for entry in found.files:
        groups[entry.vault, _sample_group(entry.path, hooked)].append(entry)
    for (_, group), entries in sorted(groups.items(), key=lambda item: str(item[0])):
        if group is None:
            out.unsampled += len(entries)
            continue
        chunks, texts = _sample(chunker, kinds, entries, fit)
        total = sum(e.size for e in entries)
        out.chunks += round(chunks * total)
        out.texts += round(texts * total)
        per_file.update({os.path.relpath(e.location, root): e.size * chunks for e in entries})
    out.folders = biggest_folders(per_file)
    return out


def _sample(chunker: FileChunker, kinds: dict[str, str], entries: list[FileEntry],
            fit: Any) -> tuple[float, float]:
    """(chunks per byte, texts encoded per byte) of a seeded sample of ``entries``."""
    if not entries:
        return 0.0, 0.0
    picked = random.Random(0).sample(entries, min(SAMPLE_FILES, len(entries)))
    pending, _ = chunk_files(chunker, kinds, [FileWork(e, None) for e in picked], fit=fit)
    size = sum(e.size for e in picked) or 1
    sections = {p.section_hash for p in pending if p.section_text is not None}
    return len(pending) / size, (len(pending) + len(sections)) / size


def _sample_group(path: str, hooked: frozenset[str]) -> str | None:
    """Which sample sizes this file: "text" for every text reader, a quick binary
    reader's name, None for a file counted unsampled (PDF, what a hook converts: a
    sample must not run a user's commands)."""
    claim = None if suffix(path) in hooked else handler_for(path)
    if claim is None:
        return None
    name = claim[0]
    if name not in BINARY_HANDLERS:
        return "text"
    return name if name in QUICK_EXTRACTION else None


def texts_per_second(device: str) -> float:
    """The rate the estimate divides by (see the module docstring)."""
    if device in ACCELERATOR_TEXTS:
        return ACCELERATOR_TEXTS[device]
    return CPU_TEXTS_PER_CORE * min(cpu_count(), CPU_SCALING_CORES)


def biggest_folders(chunks_by_file: dict[str, float], top: int = 3
                    ) -> list[tuple[str, int, int]]:
    """The folders holding the most estimated chunks; while one holds more than half of
    what is being looked at, its subfolders instead (``docs/`` -> ``docs/reference/``),
    so an exclude it suggests is no bigger than it needs to be, but not into folders that
    each hold less than a twentieth of it all (FastAPI's tests/test_tutorial/ is 88
    folders of ~200 chunks: three of them were suggested, each worth seconds)."""
    scope: tuple[str, ...] = ()
    total = sum(chunks_by_file.values())
    above: list[tuple[str, int, int]] = []
    while True:
        chunks: dict[tuple[str, ...], float] = defaultdict(float)
        files: Counter = Counter()
        for path, n in chunks_by_file.items():
            parts = PurePosixPath(path).parts
            if len(parts) > len(scope) + 1 and parts[:len(scope)] == scope:
                folder = parts[:len(scope) + 1]
                chunks[folder] += n
                files[folder] += 1
        ranked = sorted(chunks.items(), key=lambda item: -item[1])[:top]
        if not ranked:
            return above
        if above and ranked[0][1] < total / 20:
            return above
        inside = sum(chunks.values())
        biggest = ranked[0][0]
        deeper = any(len(PurePosixPath(p).parts) > len(biggest) + 1
                     and PurePosixPath(p).parts[:len(biggest)] == biggest
                     for p in chunks_by_file)
        found = [("/".join(f), files[f], round(n)) for f, n in ranked]
        if ranked[0][1] > inside / 2 and deeper and len(scope) < 6:
            scope, above = biggest, found
            continue
        return found


# --- `vq init`: the plan's estimate, and excludes for a long one ------------------------


def size_plan(plan: Plan, settings: Settings) -> Estimate:
    """The first build of ``plan`` on this machine: files, chunks, minutes (no model load).
    ``settings`` gives the model, chunk sizes and device vq would use here."""
    vaults = [Vault(v.id, (plan.root / v.path).resolve(), v.include, v.exclude,
                    cast(Kind, v.kind)) for v in plan.vaults]
    return estimate_build(replace(settings, model=plan.model), vaults,
                          detect_device(settings.device), plan.root)


def detect_device(requested: str) -> tuple[str, str]:
    """(device, why) from the one device resolver; a strict device that is absent is
    reported, and the estimate falls back to the CPU."""
    from vq.core.encoder import resolve_device

    try:
        device = resolve_device(requested)
    except VqError as exc:
        return "cpu", f"{exc.message}: estimated for the CPU"
    return device.name, device.reason


MINUTES_WORTH = 0.5  # an exclude suggested for a long estimate saves at least this


def suggest_excludes(plan: Plan, estimate: Estimate) -> list[str]:
    """For a long estimate, the biggest folders as excludes: ``(vault, pattern, folder,
    chunks, minutes)`` lines a user can paste into the config."""
    if not estimate.long:
        return []
    out = []
    for folder, files, chunks in estimate.folders:
        vault = _vault_for(plan, folder)
        if vault is None:
            continue
        base = "" if vault.path == "." else vault.path.rstrip("/") + "/"
        minutes = chunks / estimate.rate / 60 if estimate.rate else 0
        if minutes < MINUTES_WORTH:
            continue  # an exclude that saves seconds of a long build is noise
        noun = "file" if files == 1 else "files"
        what = (f"the whole of vault {vault.id}: remove vaults.{vault.id}" if folder + "/" == base
                else f"add \"/{folder[len(base):]}/\" to vaults.{vault.id}.exclude")
        out.append(f"{folder}/ ({files} {noun}, ~{chunks} chunks, ~{minutes:.0f} min): {what}")
    return out


def _vault_for(plan: Plan, folder: str) -> Proposal | None:
    """The deepest proposed vault whose path holds ``folder`` (or is it: tldr's ``pages/``
    is a vault of its own, which the root's code vault already leaves out)."""
    best = None
    for v in plan.vaults:
        base = "" if v.path == "." else v.path.rstrip("/") + "/"
        if (folder + "/").startswith(base) and (
                best is None or len(v.path) > len(best.path) or best.path == "."):
            best = v
    return best
