"""Jupyter notebooks: cells rendered as Markdown, outputs left out, bad files reported."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_config, write_tree
from tests.index.test_chunk_properties import assert_invariants
from vq.core.settings import load_settings
from vq.indexer.handlers import HandlerError, Limits, handler_for
from vq.indexer.handlers.notebook import extract_notebook, notebook_handler
from vq.indexer.project import inspect_project

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"


def notebook(cells: list[dict], language: str | None = "python") -> bytes:
    meta = {"kernelspec": {"name": "k", "language": language}} if language else {}
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4,
                       "nbformat_minor": 5}, indent=1).encode()


TUTORIAL = notebook([
    {"cell_type": "markdown", "metadata": {},
     "source": ["# Training a classifier\n", "\n", "We fit a model on the iris flowers."]},
    {"cell_type": "code", "execution_count": 1, "metadata": {},
     "outputs": [{"output_type": "display_data", "data": {"image/png": PIXEL}}],
     "source": ["from sklearn.datasets import load_iris\n", "X, y = load_iris(return_X_y=True)"]},
    {"cell_type": "markdown", "metadata": {},
     "source": "## Cross-validation\n\nFive folds keep the accuracy estimate honest."},
    {"cell_type": "code", "metadata": {}, "outputs": [],
     "source": ["scores = cross_val_score(model, X, y, cv=5)\n", 'FENCE = """\n', "```\n",
                '"""']},
    {"cell_type": "raw", "metadata": {}, "source": ["Raw notes stay as text."]},
])


def test_cells_become_markdown_and_outputs_stay_out():
    text = extract_notebook(TUTORIAL)
    assert text.startswith("# Training a classifier\n\nWe fit a model on the iris flowers.")
    assert "```python\nfrom sklearn.datasets import load_iris\n" in text
    assert "````python\nscores = cross_val_score(model, X, y, cv=5)\n" in text  # outlasts ```
    assert "Raw notes stay as text." in text and PIXEL not in text
    document = notebook_handler(TUTORIAL, "examples/iris.ipynb", Limits())
    assert document.title == "Training a classifier"
    assert [c.breadcrumb for c in document.chunks] == [
        "Training a classifier", "Training a classifier > Cross-validation"]
    assert_invariants(text, document)
    assert handler_for("examples/Iris.IPYNB")[0] == "notebook"


def test_a_notebook_without_a_language_is_python_and_a_r_kernel_says_r():
    cell = [{"cell_type": "code", "source": "x <- 1", "outputs": []}]
    assert extract_notebook(notebook(cell, None)).startswith("```python\n")
    assert extract_notebook(notebook(cell, "R")).startswith("```r\n")


@pytest.mark.parametrize(("data", "reason"), [
    (b'{"cells": [', "invalid JSON"),
    (b'[1, 2]', "no cell list"),
    (b'{"worksheets": []}', "no cell list"),  # nbformat 3
    (b"[" * 100_000 + b"]" * 100_000, "invalid JSON"),  # nesting past the parser's depth
])
def test_what_is_no_notebook_says_so_and_how_to_fix_it(data, reason):
    with pytest.raises(HandlerError, match=reason) as caught:
        extract_notebook(data)
    assert "exclude it" in str(caught.value)


def test_init_proposes_notebooks_with_the_documents(tmp_path):
    write_tree(tmp_path / "proj", {"src/model.py": "def fit():\n    pass\n",
                                   "examples/iris.ipynb": TUTORIAL.decode()})
    plan = inspect_project(tmp_path / "proj")
    docs = next(v for v in plan.vaults if v.kind == "docs")
    assert docs.include == ("*.ipynb",) and "(.ipynb 1)" in docs.why
    assert "*.ipynb" in next(v for v in plan.vaults if v.kind == "code").exclude


def test_init_sizes_notebooks_by_their_cells_not_their_outputs(tmp_path, test_models):
    """Notebooks are sampled apart from text: their bytes are mostly outputs, and sized
    by the Markdown ratio a notebook of plots came out at hundreds of chunks. The sample
    holds every file here, so the estimate is the build's own count; a PDF is counted
    unsampled, and sizing writes nothing into the index folder."""
    from dataclasses import replace

    from vq.core.settings import Settings, Vault
    from vq.indexer.estimate import estimate_build
    from vq.jobs.runner import locked_build

    plots = [{"output_type": "display_data", "data": {"image/png": PIXEL * 300}}]
    heavy = notebook([{"cell_type": "markdown", "metadata": {}, "source": "# Plots\n\nRain."},
                      {"cell_type": "code", "metadata": {}, "outputs": plots, "source": "x"}])
    write_tree(tmp_path / "nb", {"iris.ipynb": TUTORIAL.decode(), "rain.ipynb": heavy.decode(),
                                 "notes.md": "# Notes\n\n" + "Some words here.\n" * 200})
    (tmp_path / "nb" / "paper.pdf").write_bytes(b"%PDF-1.4 not really")
    settings = Settings(index_dir=str(tmp_path / "index"), model=test_models, device="cpu",
                        vaults=(Vault("nb", tmp_path / "nb", kind="docs"),))
    estimate = estimate_build(settings, settings.vaults, ("cpu", "asked"), tmp_path)
    assert not (tmp_path / "index").exists()
    summary = locked_build(replace(settings, vaults=settings.vaults))
    assert estimate.unsampled == 1 and estimate.files == summary.files_seen == 4
    assert estimate.chunks == summary.chunks_written


@pytest.mark.model
def test_a_notebook_is_searchable_by_its_markdown_headings(tmp_path, build, cli):
    """A real build: the section is found by what its Markdown cell says, a broken
    notebook is one reported file, and the build goes on."""
    write_tree(tmp_path / "nb", {"iris.ipynb": TUTORIAL.decode(), "broken.ipynb": '{"cells": ['})
    cfg = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"nb": {"path": str(tmp_path / "nb"), "kind": "docs"}}})
    summary = build(load_settings(str(cfg)))
    assert summary.outcome == "ok" and summary.files_new == 1
    [problem] = summary.problems
    assert problem["path"] == "broken.ipynb" and "not a Jupyter notebook" in problem["reason"]
    hits = json.loads(cli("--config", cfg, "search", "--json",
                          "how many folds for an honest accuracy estimate").stdout)
    assert (hits[0]["path"], hits[0]["breadcrumb"]) == (
        "iris.ipynb", "Training a classifier > Cross-validation")
    assert not any(PIXEL[:20] in h.get("snippet", "") for h in hits)


def test_a_notebook_of_plots_has_the_document_cap_not_the_text_one(tmp_path, build, cli):
    """A notebook's bytes are mostly outputs: past ``max_file_bytes`` it is still read
    (its cap is ``max_document_bytes``), while a Markdown page as big is refused, and a
    notebook whose cells hold more text than ``extract_max_chars`` is refused by name."""
    plots = [{"output_type": "display_data", "data": {"image/png": PIXEL * 400}}]
    big = notebook([{"cell_type": "markdown", "metadata": {},
                     "source": "# Seasonal plots\n\nMonthly rainfall in Lisbon, by decade."},
                    {"cell_type": "code", "metadata": {}, "outputs": plots * 3,
                     "source": "plot(rain)"}])
    wordy = notebook([{"cell_type": "markdown", "metadata": {},
                       "source": "# Diary\n\n" + "a long entry\n" * 3000}])
    assert len(big) > 100_000 and len(wordy) < 100_000
    write_tree(tmp_path / "nb", {"rain.ipynb": big.decode(), "diary.ipynb": wordy.decode(),
                                 "page.md": "# Page\n\n" + "filler words\n" * 9000})
    cfg = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "max_file_bytes": 100_000,
        "max_document_bytes": 1_000_000, "extract_max_chars": 30_000,
        "vaults": {"nb": {"path": str(tmp_path / "nb"), "kind": "docs"}}})
    summary = build(load_settings(str(cfg)))
    assert summary.files_new == 1
    reasons = {p["path"]: p["reason"] for p in summary.problems}
    assert "max_file_bytes 100000" in reasons["page.md"]
    assert "extract_max_chars (30000)" in reasons["diary.ipynb"]
    hits = json.loads(cli("--config", cfg, "search", "--json", "rainfall in Lisbon").stdout)
    assert hits[0]["path"] == "rain.ipynb"

    shrunk = str(write_config(tmp_path / "small.yaml", {
        "index_dir": str(tmp_path / "index"), "max_file_bytes": 100_000,
        "max_document_bytes": 100_000, "vaults": {"nb": {"path": str(tmp_path / "nb"),
                                                          "kind": "docs"}}}))
    again = build(load_settings(shrunk))
    reasons = {p["path"]: p["reason"] for p in again.problems}
    assert "raise max_document_bytes" in reasons["rain.ipynb"]
    hits = json.loads(cli("--config", shrunk, "search", "--json", "rainfall in Lisbon").stdout)
    assert hits[0]["path"] == "rain.ipynb"  # what was indexed is not lost to the error
