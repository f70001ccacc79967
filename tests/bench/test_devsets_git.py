"""Dev sets fetched from Git at pinned commits, and sets that mix section and code targets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import code_score, gitcorpus, quality  # noqa: E402
from bench.common import eval_dir  # noqa: E402


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    """A real repository with two commits; the dev set pins the first."""
    repo = tmp_path / "owner+records" / "repo"
    (repo / "docs" / "adr").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "docs" / "adr" / "0001-a.md").write_text("# A\n\n## Decision\n\nfirst\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    pinned = git(repo, "rev-parse", "HEAD")
    (repo / "docs" / "adr" / "0001-a.md").write_text("# A\n\n## Decision\n\nrewritten\n")
    git(repo, "commit", "-qam", "two")
    devset = tmp_path / "devset"
    devset.mkdir()
    (devset / "sources.json").write_text(json.dumps([{
        "dir": "records", "repo": "owner/records", "commit": pinned, "subdir": "docs/adr"}]))
    (devset / "files.txt").write_text("records/0001-a.md\n")
    monkeypatch.setenv("VQ_BENCH_GIT_URL", str(tmp_path / "{owner}+{name}" / "repo"))
    monkeypatch.setenv("VQ_BENCH_GIT_CACHE", str(tmp_path / "cache"))
    return devset


def test_a_git_corpus_is_the_pinned_commit_not_the_branch_head(upstream, tmp_path):
    root = gitcorpus.materialise(upstream, tmp_path / "corpus")
    assert (root / "records" / "0001-a.md").read_text() == "# A\n\n## Decision\n\nfirst\n"
    assert [p.name for p in root.rglob("*") if p.is_file()] == ["0001-a.md"]
    cached = list((tmp_path / "cache").iterdir())
    assert len(cached) == 1 and cached[0].name.startswith("owner+records@")


def test_an_unreachable_source_or_missing_file_is_a_fetch_error(upstream, tmp_path, monkeypatch):
    (upstream / "files.txt").write_text("records/0001-a.md\nrecords/0002-gone.md\n")
    with pytest.raises(gitcorpus.FetchError, match="0002-gone.md"):
        gitcorpus.materialise(upstream, tmp_path / "corpus")
    monkeypatch.setenv("VQ_BENCH_GIT_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("VQ_BENCH_GIT_URL", str(tmp_path / "nowhere"))
    with pytest.raises(gitcorpus.FetchError):
        gitcorpus.materialise(upstream, tmp_path / "corpus")
    assert not list((tmp_path / "empty-cache").iterdir())  # no half-fetched tree is kept


MIXED_MD = "# Guide\n\n## Timeouts\n\nSet a timeout.\n\n## Proxies\n\nUse a proxy.\n"
MIXED_PY = "def connect():\n    pass\n\n\nclass Pool:\n    def acquire(self):\n        pass\n"


def test_a_set_with_section_and_code_targets_scores_the_weighted_mean(tmp_path):
    if not (eval_dir() / "score.py").is_file():
        pytest.skip(f"shared eval set not found at {eval_dir()}")
    root = tmp_path / "corpus"
    (root / "docs").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "docs" / "guide.md").write_text(MIXED_MD)
    (root / "pkg" / "net.py").write_text(MIXED_PY)
    queries = [{"id": "d1", "q": "timeout", "path": "docs/guide.md", "heading": "Timeouts",
                "style": "task"},
               {"id": "c1", "q": "acquire", "path": "pkg/net.py", "symbol": "Pool.acquire",
                "style": "task"},
               {"id": "c2", "q": "connect", "path": "pkg/net.py", "symbol": "connect",
                "style": "symbol"}]
    qpath = tmp_path / "queries.jsonl"
    qpath.write_text("".join(json.dumps(q) + "\n" for q in queries))
    corpus = quality.Corpus("mixed", root, qpath, "mixed")
    results = [{"id": "d1", "hits": [{"path": "docs/guide.md", "start_line": 3, "end_line": 5}]},
               {"id": "c1", "hits": [{"path": "pkg/net.py", "start_line": 1, "end_line": 2},
                                     {"path": "pkg/net.py", "start_line": 5, "end_line": 7}]}]
    m = quality.score(corpus, results, tmp_path / "work")  # d1 rank 1, c1 rank 2, c2 missed
    assert m["n"] == 3
    assert m["recall@10"] == pytest.approx(2 / 3)
    assert m["mrr@10"] == pytest.approx((1 + 1 / 2) / 3)
    assert m["parts"]["sections"]["n"] == 1 and m["parts"]["code"]["n"] == 2
    assert m["parts"]["code"]["mrr@10"] == pytest.approx(1 / 4)
    assert set(m["by_style"]) == {"task", "code task", "code symbol"}  # kept apart
    assert m["by_style"]["task"]["mrr@10"] == 1 and m["by_style"]["code task"]["mrr@10"] == 0.5


def test_a_multi_vault_corpus_writes_one_vault_per_folder(tmp_path):
    corpus = quality.Corpus("p", tmp_path, tmp_path / "q.jsonl", "p",
                            vaults=(("docs", "docs", "notes", ("*.md",)),
                                    ("code", "", "code", ("*.py",))))
    specs = corpus.vault_specs()
    assert specs["docs"] == {"path": tmp_path / "docs", "kind": "notes", "include": ["*.md"]}
    assert specs["code"] == {"path": tmp_path, "kind": "code", "include": ["*.py"]}
    single = quality.Corpus("s", tmp_path, tmp_path / "q.jsonl", "s").vault_specs()
    assert single == {"s": {"path": tmp_path, "kind": "docs", "include": ["*.md"]}}


@pytest.mark.parametrize("name, counts", [("adr", {"heading": 50}),
                                          ("httpx", {"heading": 25, "symbol": 25})])
def test_git_dev_set_targets_resolve(tmp_path, name, counts):
    """Every judged query resolves at the pinned commit: one heading in its file, or one
    definition; a hand-edited set fails here, not in a bench."""
    try:
        corpus = {"adr": quality.adr_corpus, "httpx": quality.httpx_corpus}[name](tmp_path)
    except gitcorpus.FetchError:
        corpus = None
    if corpus is None:
        pytest.skip(f"the {name} corpus cannot be fetched here (offline, no cache)")
    queries = quality.read_queries(corpus.queries)
    assert len({q["id"] for q in queries}) == len(queries) == sum(counts.values())
    assert {k: sum(k in q for q in queries) for k in counts} == counts
    for q in queries:
        if "heading" in q:
            lines = (corpus.root / q["path"]).read_text(encoding="utf-8").split("\n")
            assert quality.headings(lines).count(q["heading"]) == 1, q["id"]
            assert q["style"] in ("paraphrase", "question", "keyword", "task"), q["id"]
        else:
            assert code_score.resolve(corpus.root, q["path"], q["symbol"])[1] is None, q["id"]
