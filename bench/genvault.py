"""A reproducible vault: realistic Markdown notes and Python modules from a seed.

File ``i`` depends only on ``(seed, i)`` (it links to earlier files only),
so a 10k vault is the first 10k files of the 100k one and a size is a
parameter, not a fixture. Notes carry YAML frontmatter, headings at three
levels, paragraphs, lists, code fences in both styles (with ``#`` comment
lines inside, which are not headings), wiki and Markdown links. Modules
carry docstrings, classes and functions. Every file gets a fixed mtime, so
two runs with one seed give byte- and stat-identical trees.

    python -m bench.genvault OUT --files 10000 [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
from dataclasses import dataclass
from pathlib import Path

WORDS = (
    "the of and to in is that for it as with was on be by this are from at or an have not "
    "which but all we can will one there their has more if when about been so what some they "
    "would into only other time than its new also after use two these may first any could "
    "service index query build release deploy cluster node config schema migration backup "
    "cache latency throughput queue worker scheduler retry timeout error log metric alert "
    "dashboard token session user account billing invoice payment customer report export "
    "import pipeline batch stream event message broker topic partition replica shard lock "
    "transaction commit rollback snapshot volume disk memory cpu network socket proxy route "
    "gateway endpoint request response header payload json yaml file folder path vault note "
    "meeting decision review draft plan roadmap quarter goal risk owner estimate sprint task "
    "bug fix patch test coverage fixture mock benchmark profile trace span sample window "
    "vector embedding model encoder chunk search ranking fusion recall precision score "
    "container image registry tag volume mount port host daemon certificate key secret "
    "permission role policy audit compliance incident postmortem runbook oncall escalation "
    "garden recipe bread oven flour travel train ticket hotel museum book chapter author "
    "kubernetes postgres redis kafka nginx terraform ansible python rust golang typescript "
    "compact optimize fragment version manifest reconcile hash mtime stat walk ignore glob"
).split()
WEIGHTS = [1.0 / (rank + 1) ** 0.9 for rank in range(len(WORDS))]
TOPICS = ("ops", "product", "research", "personal", "infra", "data", "security", "team")
TAGS = ("ops", "planning", "adr", "howto", "meeting", "idea", "bug", "release", "reading")
BASE_MTIME = 1_735_689_600  # 2025-01-01T00:00:00Z
SPAN_SECONDS = 2 * 365 * 86400


@dataclass(frozen=True)
class Spec:
    """How many files, from which seed, and what share of them is code."""

    files: int
    seed: int = 7
    code_share: float = 0.15
    folder_size: int = 100   # files per leaf folder, like a real notes tree


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, weights=WEIGHTS, k=n))


def sentence(rng: random.Random) -> str:
    text = words(rng, rng.randint(6, 18))
    return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))


def paragraph(rng: random.Random, links: list[str]) -> str:
    parts = [sentence(rng) for _ in range(rng.randint(2, 6))]
    if links and rng.random() < 0.35:
        target = rng.choice(links)
        parts.insert(rng.randrange(len(parts)), rng.choice(
            (f"See [[{Path(target).stem}]].", f"Details in [{words(rng, 2)}]({target}).")))
    return " ".join(parts)


def title(rng: random.Random) -> str:
    return words(rng, rng.randint(3, 7)).capitalize()


def fence(rng: random.Random) -> str:
    marker = rng.choice(("```", "```", "~~~"))
    lang = rng.choice(("bash", "python", "yaml", "sql"))
    body = [f"# {words(rng, 4)}"] if lang in ("bash", "python", "yaml") else []
    body += [f"{rng.choice(WORDS)}_{rng.choice(WORDS)} = {rng.randint(1, 999)}"
             for _ in range(rng.randint(2, 8))]
    return "\n".join([marker + lang, *body, marker])


def bullets(rng: random.Random) -> str:
    mark = rng.choice(("-", "*", "1."))
    return "\n".join(f"{mark} {words(rng, rng.randint(3, 12))}" for _ in range(rng.randint(2, 6)))


def block(rng: random.Random, links: list[str]) -> str:
    roll = rng.random()
    if roll < 0.6:
        return paragraph(rng, links)
    if roll < 0.8:
        return bullets(rng)
    return fence(rng)


def note(rng: random.Random, links: list[str]) -> str:
    head = title(rng)
    day = BASE_MTIME + rng.randrange(SPAN_SECONDS)
    iso = f"{1970 + day // 31_557_600:04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    tags = ", ".join(sorted(set(rng.choices(TAGS, k=rng.randint(1, 3)))))
    out = ["---", f"title: {head}", f"date: {iso}", f"tags: [{tags}]", "---", f"# {head}", ""]
    for _ in range(rng.randint(1, 4)):
        out += [f"## {title(rng)}", ""]
        for _ in range(rng.randint(1, 3)):
            out += [block(rng, links), ""]
        if rng.random() < 0.3:
            out += [f"### {title(rng)}", "", block(rng, links), ""]
    return "\n".join(out)


def module(rng: random.Random) -> str:
    out = [f'"""{sentence(rng)}"""', "", "from __future__ import annotations", "", ""]
    for _ in range(rng.randint(1, 4)):
        name = "".join(w.capitalize() for w in rng.sample(WORDS, 2))
        out += [f"class {name}:", f'    """{sentence(rng)}"""', ""]
        for _ in range(rng.randint(1, 4)):
            out += _function(rng, "    ") + [""]
        out.append("")
    for _ in range(rng.randint(0, 3)):
        out += _function(rng, "") + ["", ""]
    return "\n".join(out).rstrip() + "\n"


def _function(rng: random.Random, indent: str) -> list[str]:
    name = "_".join(rng.sample(WORDS, 2))
    args = ", ".join(rng.sample(WORDS, rng.randint(0, 3)))
    self_ = "self, " if indent and args else ("self" if indent else "")
    lines = [f"{indent}def {name}({self_}{args}):", f'{indent}    """{sentence(rng)}"""']
    for _ in range(rng.randint(1, 6)):
        lines.append(f"{indent}    {rng.choice(WORDS)}_{rng.randint(0, 9)} = "
                     f"{rng.choice(WORDS)!r}  # {words(rng, 5)}")
    lines.append(f"{indent}    return None")
    return lines


def relpath(spec: Spec, i: int) -> str:
    """Where file ``i`` lives: deterministic, ~``folder_size`` files per leaf folder."""
    folder = i // spec.folder_size
    topic = TOPICS[folder % len(TOPICS)]
    code = random.Random(f"{spec.seed}:{i}:kind").random() < spec.code_share
    if code:
        return f"src/{topic}/pkg{folder:04d}/mod_{i:06d}.py"
    return f"notes/{topic}/{folder // len(TOPICS):03d}/note-{i:06d}.md"


def render(spec: Spec, i: int) -> tuple[str, str, int]:
    """(relative path, text, mtime) of file ``i``."""
    rng = random.Random(f"{spec.seed}:{i}")
    rel = relpath(spec, i)
    if rel.endswith(".py"):
        text = module(rng)
    else:
        peers = [relpath(spec, j) for j in rng.sample(range(i), min(3, i))]  # earlier files
        links = ["../../" + "/".join(p.split("/")[1:]) for p in peers if p.endswith(".md")]
        text = note(rng, links)
    return rel, text, BASE_MTIME + rng.randrange(SPAN_SECONDS)


def generate(root: Path, spec: Spec) -> int:
    """Write the vault under ``root``; returns the total bytes written."""
    total = 0
    made: set[str] = set()
    for i in range(spec.files):
        rel, text, mtime = render(spec, i)
        path = root / rel
        parent = str(path.parent)
        if parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(parent)
        data = text.encode("utf-8")
        path.write_bytes(data)
        os.utime(path, ns=(mtime * 10**9, mtime * 10**9))
        total += len(data)
    return total


BLOCK = 10_000


def text_block(seed: int, block: int) -> list[str]:
    """Chunk-shaped texts ``block*BLOCK .. +BLOCK``: a breadcrumb header + 40-160 words.

    For tables written directly (1M rows): numpy draws a whole block of words
    at once, so a million texts take seconds; a block depends only on
    ``(seed, block)``, so the 10k table is the start of the 1M one.
    """
    import numpy as np

    rng = np.random.default_rng([seed, block])
    vocab = np.array(WORDS, dtype=object)
    probs = np.array(WEIGHTS) / sum(WEIGHTS)
    lengths = rng.integers(40, 160, size=BLOCK)
    words_ = vocab[rng.choice(len(vocab), size=int(lengths.sum()), p=probs)]
    ends = np.cumsum(lengths)
    out = []
    for j, (end, n) in enumerate(zip(ends.tolist(), lengths.tolist(), strict=True)):
        body = words_[end - n:end]
        i = block * BLOCK + j
        out.append(f"notes/{TOPICS[i % len(TOPICS)]}/note-{i:07d}.md > "
                   f"{' '.join(body[:4]).capitalize()}\n\n{' '.join(body[4:])}")
    return out


def chunk_like_texts(n: int, seed: int = 7) -> list[str]:
    """The first ``n`` texts of the stream (see ``text_block``)."""
    out: list[str] = []
    for block in range(-(-n // BLOCK)):
        out += text_block(seed, block)
    return out[:n]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Write a reproducible vault of notes and code.")
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--code-share", type=float, default=0.15)
    args = ap.parse_args(argv)
    size = generate(args.out, Spec(args.files, args.seed, args.code_share))
    print(f"wrote {args.files} files, {size / 1e6:.1f} MB under {args.out}")


if __name__ == "__main__":
    main()
