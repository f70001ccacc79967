"""Dev-set corpora that live in public Git repositories, fetched at pinned commits.

A dev set folder (``bench/devsets/<name>``) with a ``sources.json`` names, for
each part of its corpus, the repository, the commit and the folder the files
come from; ``files.txt`` lists the corpus-relative paths. Nothing of those
repositories is copied into this one (some carry no licence that would allow
it): the bench fetches them. Fetched trees are kept in
``$VQ_BENCH_GIT_CACHE`` (default ``~/.cache/vq-bench/git``), one folder per
repository and commit, so a second run reads the disk. ``$VQ_BENCH_GIT_URL``
is the clone address as a template (default ``https://github.com/{repo}.git``;
``{owner}`` and ``{name}`` are filled too, so a local mirror works:
``/srv/mirror/{owner}+{name}/repo``). A corpus that cannot be fetched is a
skip with the reason, never a failure.

    python -m bench.gitcorpus NAME DIR    # materialise bench/devsets/NAME's corpus in DIR
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEVSETS = Path(__file__).resolve().parent / "devsets"
DEFAULT_URL = "https://github.com/{repo}.git"


@dataclass(frozen=True)
class Source:
    """One part of a corpus: files under ``dir`` come from ``repo``@``commit``/``subdir``."""

    dir: str
    repo: str
    commit: str
    subdir: str


class FetchError(RuntimeError):
    """The repository or commit could not be fetched (offline, moved, rewritten)."""


def sources(devset: Path) -> list[Source]:
    return [Source(**s) for s in json.loads((devset / "sources.json").read_text("utf-8"))]


def cache_root() -> Path:
    return Path(os.environ.get("VQ_BENCH_GIT_CACHE", Path.home() / ".cache" / "vq-bench" / "git"))


def clone_url(repo: str) -> str:
    owner, name = repo.split("/", 1)
    return os.environ.get("VQ_BENCH_GIT_URL", DEFAULT_URL).format(repo=repo, owner=owner,
                                                                  name=name)


def tree(source: Source) -> Path:
    """The repository's files at the commit, fetched once into the cache."""
    dest = cache_root() / f"{source.repo.replace('/', '+')}@{source.commit}"
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        _git("init", "-q", "--bare", tmp)
        url = clone_url(source.repo)
        try:  # one commit, shallow: what GitHub and any recent git serve
            _git("--git-dir", tmp, "fetch", "-q", "--depth", "1", url, source.commit)
        except FetchError:  # a server that refuses a bare SHA: fetch its refs instead
            _git("--git-dir", tmp, "fetch", "-q", url, "+refs/heads/*:refs/heads/*")
        archive = _git("--git-dir", tmp, "archive", "--format=tar", source.commit, binary=True)
        staging = Path(tmp) / "tree"
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(staging, filter="data")
        staging.rename(dest)  # atomic: a half-fetched tree is never taken for a whole one
    return dest


def _git(*args: str, binary: bool = False) -> bytes:
    proc = subprocess.run(["git", *args], capture_output=True, check=False,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    if proc.returncode != 0:
        raise FetchError(f"git {' '.join(args[:4])}...: {proc.stderr.decode()[-300:].strip()}")
    return proc.stdout if binary else b""


def materialise(devset: Path, root: Path) -> Path:
    """Copy the listed files into ``root`` (replaced); raises FetchError when a source is
    unreachable or a listed file is missing at its commit."""
    parts = sources(devset)
    names = (devset / "files.txt").read_text(encoding="utf-8").split()
    shutil.rmtree(root, ignore_errors=True)
    for name in names:
        source = next((s for s in parts if not s.dir or name.startswith(s.dir + "/")), None)
        if source is None:
            raise FetchError(f"{name}: no source in {devset / 'sources.json'} covers it")
        rest = name[len(source.dir) + 1:] if source.dir else name
        src = tree(source) / source.subdir / rest
        if not src.is_file():
            raise FetchError(f"{name}: not in {source.repo}@{source.commit[:12]}")
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, root / name)
    return root


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().split("\n")[-1].strip(), file=sys.stderr)
        return 2
    try:
        root = materialise(DEVSETS / args[0], Path(args[1]))
    except FetchError as exc:
        print(f"error: {exc}\nnext: set VQ_BENCH_GIT_URL to a reachable clone address",
              file=sys.stderr)
        return 2
    print(f"{sum(1 for p in root.rglob('*') if p.is_file())} files in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
