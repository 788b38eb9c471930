"""The notebooks run top to bottom on the offline defaults, and are stored without outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers import DATA, ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_six_notebooks_stored_clean() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01-recall.ipynb", "02-reflection.ipynb", "03-simulation.ipynb",
                                           "04-benchmarks.ipynb", "05-experiments.ipynb", "06-memory-designs.ipynb"]
    for path in NOTEBOOKS:
        book = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") and not c.get("execution_count") for c in book.cells if c.cell_type == "code")


#: The notebooks that read the dev halves in ../shared/data.
ON_DATA = ("04-benchmarks", "06-memory-designs")


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.real_data] if p.stem in ON_DATA else [])
                                  for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    if path.stem in ON_DATA and not DATA.exists():
        pytest.skip("../shared/data is not here")
    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    images = sum(1 for c in book.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {}))
    assert images >= 1, "the notebook draws no figure"
