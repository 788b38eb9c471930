"""The docs site: an API page for every package face, a docstring for every public name, every name on its page.

`make test` builds the site with ``mkdocs build --strict`` (a broken link, a missing page or anchor, an
unresolved reference fails it); these tests hold what the strict build cannot see: that no face is left
out of the reference, that each class and function in a face's ``__all__`` says what it is for, and (on a
built site) that every name in ``__all__`` has its entry on its face's page.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

API = ROOT / "docs" / "api"
#: Not a face for programs: the command line's own package (its reference is `memstream --help`, docs/cli.md).
NOT_FACES = {"memstream.cli"}


def faces() -> list[str]:
    """memstream itself, each package directly under it, and each top-level module with an ``__all__``."""
    names = ["memstream"]
    for path in sorted((ROOT / "memstream").iterdir()):
        if (path / "__init__.py").is_file():
            names.append(f"memstream.{path.name}")
        elif path.suffix == ".py" and not path.name.startswith("_") and re.search(r"^__all__\s*=", path.read_text(encoding="utf-8"), re.MULTILINE):
            names.append(f"memstream.{path.stem}")
    return [n for n in names if n not in NOT_FACES]


def page(face: str) -> Path:
    return API / f"{face.rsplit('.', 1)[-1]}.md"


def nav_pages() -> set[str]:
    """Every page named in mkdocs.yml's nav."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, str):
            found.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    # mkdocs.yml may hold !!python tags elsewhere; the nav is plain YAML.
    walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    return found


@pytest.mark.parametrize("face", faces())
def test_every_face_has_a_reference_page_in_the_nav(face: str) -> None:
    text = page(face).read_text(encoding="utf-8") if page(face).is_file() else ""
    assert f"::: {face}\n" in text, f"docs/api/{page(face).name} must render ::: {face}"
    assert f"api/{page(face).name}" in nav_pages(), f"mkdocs.yml's nav must list api/{page(face).name}"


@pytest.mark.parametrize("face", faces())
def test_every_public_class_and_function_says_what_it_is_for(face: str) -> None:
    module = importlib.import_module(face)
    names = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    silent = []
    for name in names:
        obj = getattr(module, name)
        documented = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not documented:
            silent.append(name)
    assert not silent, f"{face}: no docstring on {silent}"


def anchors(html: str) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', html))


def expected_anchors(face: str, name: str) -> set[str]:
    """The ids mkdocstrings may give a public name: under the face; under its own module when it is a module;
    by its full path when it is a function that shares its module's name (the page renders it by that path)."""
    obj = getattr(importlib.import_module(face), name)
    if inspect.ismodule(obj):
        return {obj.__name__}
    if inspect.isfunction(obj) and obj.__module__.rsplit(".", 1)[-1] == name:
        return {f"{face}.{name}", f"{obj.__module__}.{name}"}
    return {f"{face}.{name}"}


def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site `make test` just built (site/ newer than every source), else one built here, strictly."""
    site = ROOT / "site"
    sources = [ROOT / "README.md", ROOT / "mkdocs.yml", *(ROOT / "docs").rglob("*.md"), *(ROOT / "memstream").rglob("*.py"),
               *(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "benchmarks" / "results").glob("*.json"),
               ROOT / "scripts" / "mkdocs_hooks.py"]
    if (site / "api").is_dir() and (site / "index.html").stat().st_mtime > max(p.stat().st_mtime for p in sources):
        return site
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "MEMSTREAM_DOCS_EXECUTE": "quick"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One built site for this module's tests."""
    return built_site(tmp_path_factory)


@pytest.mark.slow
def test_every_public_name_has_its_entry_on_its_face_page(site: Path) -> None:
    missing = []
    for face in faces():
        found = anchors((site / "api" / page(face).with_suffix(".html").name).read_text(encoding="utf-8"))
        module = importlib.import_module(face)
        for name in getattr(module, "__all__", []):
            wanted = expected_anchors(face, name)
            if not any(a in wanted or a.rsplit(".", 1)[0] in wanted for a in found):
                missing.append(f"{face}.{name}")
    assert not missing, f"not in the API reference: {missing}"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Quickstart: a memory stream in a notebook" in home and 'href="docs/' not in home  # the README, links fixed


@pytest.mark.slow
def test_the_quick_notebooks_pages_show_their_plots_and_the_results_page_its_tables(site: Path) -> None:
    # As `make docs-strict` builds it (or `make docs`): the quick notebooks executed.
    for stem in ("01-recall", "02-reflection", "03-simulation"):
        html = (site / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        assert re.search(r'<img[^>]*src="data:image/png;base64,', html), f"{stem}: no plot on its page"
    results = (site / "results.html").read_text(encoding="utf-8")
    assert results.count("<table>") == len(list((ROOT / "benchmarks" / "results").glob("*.json")))
    assert "python benchmarks/retrieval.py --n 1000,10000,100000" in results
