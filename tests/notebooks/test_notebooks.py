"""The notebooks run top to bottom on the offline defaults, and are stored without outputs; 04 and 06 run on a fresh
clone too, without the benchmarks' data, on the samples memstream ships, and say so."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers import DATA, ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_seven_notebooks_stored_clean() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01-recall.ipynb", "02-reflection.ipynb", "03-simulation.ipynb",
                                           "04-benchmarks.ipynb", "05-experiments.ipynb", "06-memory-designs.ipynb",
                                           "07-one-agent-two-designs.ipynb"]
    for path in NOTEBOOKS:
        book = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") and not c.get("execution_count") for c in book.cells if c.cell_type == "code")


#: The notebooks that read the dev halves in ../shared/data.
ON_DATA = ("04-benchmarks", "06-memory-designs")


def _run(path: Path) -> nbformat.NotebookNode:
    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    images = sum(1 for c in book.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {}))
    assert images >= 1, "the notebook draws no figure"
    return book


def _printed(book: nbformat.NotebookNode, heading: str) -> str:
    """What the code cells under the markdown cell that starts with ``heading`` printed, up to the next one."""
    start = next(i for i, c in enumerate(book.cells) if c.cell_type == "markdown" and c.source.startswith(heading))
    out = []
    for cell in book.cells[start + 1:]:
        if cell.cell_type == "markdown":
            break
        out += [o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream"]
    return "".join(out)


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.real_data] if p.stem in ON_DATA else [])
                                  for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    if path.stem in ON_DATA and not DATA.exists():
        pytest.skip("../shared/data is not here (test_notebook_runs_without_the_data runs it on the samples)")
    book = _run(path)
    if path.stem == "03-simulation":  # the summaries a listener keeps are thoughts: the cell once showed none
        news = _printed(book, "## How news spread").splitlines()
        assert news and all(" told " in line for line in news), news
    if path.stem == "07-one-agent-two-designs":  # the same questions set side by side, both memories answering
        side = _printed(book, "## What she was asked to recall").splitlines()
        assert any(line.strip().startswith("stream ") for line in side), side
        assert any(line.strip().startswith("recent ") for line in side), side


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem in ON_DATA], ids=lambda p: p.stem)
def test_notebook_runs_without_the_data(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh clone has no ../shared/data: the notebook runs on memstream/examples' samples and says so in a line."""
    monkeypatch.setenv("MEMSTREAM_DATA", str(tmp_path))  # an empty folder: the kernel inherits the variable
    book = _run(path)
    said = [line for c in book.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "stream"
            for line in o.get("text", "").splitlines() if "memstream's own small sample" in line]
    assert said and all(str(tmp_path) in line and "arXiv:" in line for line in said), said
    assert any(line.startswith("LoCoMo: ") for line in said)
