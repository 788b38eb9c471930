"""The README's and the guide pages' examples run as pasted, offline, in a temporary directory.

Each page's ```python blocks are a walk-through: a later one uses what an earlier one made, as a reader
pasting them into one notebook would, so a page's blocks run in order in one namespace (each page its own).
A shell block runs only when the line before its fence says so (``<!-- run by tests/test_readme.py -->``):
most shell blocks are synopses of a command's flags, or need data, a server or minutes; the marked ones are
offline and quick, and run in order in one temporary directory with ``memstream`` on the PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

README = ROOT / "README.md"
#: The guide pages whose Python examples are walk-throughs a reader pastes, offline (the README's, moved there).
#: Others show code that needs a server (postgres.md) or is a fragment of a module (architecture.md).
PAGES = [ROOT / "docs" / name for name in ("stream.md", "simulation.md", "designs.md", "facts.md", "trust.md")]
RUN_MARK = "<!-- run by tests/test_readme.py -->"
_BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)
#: The model and embedder variables a reader's shell may have set: unset, so the examples use the offline stand-ins.
MODEL_VARIABLES = ("MEMSTREAM_LLM", "MEMSTREAM_EMBEDDER", "OPENAI_API_KEY", "OPENAI_BASE_URL")


def blocks(text: str, language: str) -> list[str]:
    """A page's blocks in ``language``, in order."""
    return [m.group(2) for m in _BLOCK.finditer(text) if m.group(1) == language]


def python_blocks(text: str) -> list[str]:
    """A page's ```python blocks, in order (tests/test_packaging.py runs the README's on an installed wheel)."""
    return blocks(text, "python")


def marked_shell_blocks(text: str) -> list[str]:
    """The ```bash blocks whose fence follows the run mark, in order."""
    return [m.group(2) for m in _BLOCK.finditer(text)
            if m.group(1) == "bash" and text[:m.start()].rstrip("\n").endswith(RUN_MARK)]


def run_python(page: Path) -> dict[str, object]:
    """Every ```python block of ``page`` in one namespace, in order; a failing block names itself."""
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for i, block in enumerate(blocks(page.read_text(encoding="utf-8"), "python"), 1):
        try:
            exec(compile(block, f"{page.name} python block {i}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"{page.name} python block {i} fails as pasted: {type(e).__name__}: {e}\n{block}") from e
    return namespace


@pytest.fixture
def offline_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_blocks_are_found() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(blocks(text, "python")) == 2 and blocks(text, "python")[0].lstrip().startswith("from datetime import")
    assert len(marked_shell_blocks(text)) == 1 and "memstream view" in marked_shell_blocks(text)[0]
    assert all(blocks(page.read_text(encoding="utf-8"), "python") for page in PAGES)


def test_the_readme_python_blocks_run_and_show_what_they_say(offline_here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_python(README)
    out = capsys.readouterr().out.splitlines()
    assert "Isabella is planning a Valentine's Day party" in out[0]  # the stream: "the party first"
    sides = {line.split()[0]: line for line in out if line.split()[0] in ("full", "vector", "tiered", "facts")}
    assert sides["facts"].endswith("False")                               # "facts alone: False"
    assert all(sides[d].endswith("True") for d in ("full", "vector", "tiered"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_python_block_of_a_guide_page_runs_as_pasted(page: Path, offline_here: Path) -> None:
    run_python(page)


def test_the_facts_page_changed_their_mind_example_does_what_its_comment_says(offline_here: Path) -> None:
    namespace = run_python(ROOT / "docs" / "facts.md")
    facts, now = namespace["facts"], namespace["now"]
    current = facts.context("ann", "When is my deadline?", now, 2000).text  # type: ignore[attr-defined]
    assert "Friday the 15th" in current and "Thursday" not in current  # its comment: "Friday only"
    both = facts.context("ann", "When was my deadline originally?", now, 2000).text  # type: ignore[attr-defined]
    assert "Thursday the 14th" in both and "Friday the 15th" in both  # and "originally?" shows both


@pytest.mark.slow
def test_the_readme_marked_shell_blocks_run_as_pasted(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "memstream"  # this checkout's memstream, as `pip install .` would put it on the PATH
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import sys; from memstream.cli import main; sys.exit(main())' \"$@\"\n")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT))
    work = tmp_path / "work"
    work.mkdir()
    for i, block in enumerate(marked_shell_blocks(README.read_text(encoding="utf-8")), 1):
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, f"README shell block {i} fails as pasted:\n{block}\n{proc.stderr[-2000:]}"
    page = (work / "quick.html").read_text(encoding="utf-8")  # its comment: "one self-contained page"
    assert "Isabella Rodriguez" in page and "<script src=" not in page
    assert (work / "runs" / "quick" / "events.jsonl").stat().st_size > 0
