"""The README's Python examples run as pasted: each ```python block, in order, offline, in a temporary directory.

The blocks are a walk-through: a later one uses what an earlier one made (the Quickstart's ``stream``,
``chat`` and times), as a reader pasting them into one notebook would. So they run in one namespace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

README = ROOT / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    """The README's ```python blocks, in order."""
    return [m.group(1) for m in _BLOCK.finditer(text)]


def test_the_blocks_are_found() -> None:
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 5 and blocks[0].lstrip().startswith("from datetime import")


def test_every_python_block_of_the_readme_runs_as_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("MEMSTREAM_LLM", "MEMSTREAM_EMBEDDER", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)  # offline: the stand-ins, whatever the shell has set
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for i, block in enumerate(python_blocks(README.read_text(encoding="utf-8")), 1):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"README python block {i} fails as pasted: {type(e).__name__}: {e}\n{block}") from e
    assert "Isabella is planning a Valentine's Day party" in capsys.readouterr().out  # the Quickstart's recall
    facts, now = namespace["facts"], namespace["now"]
    current = facts.context("ann", "When is my deadline?", now, 2000).text  # type: ignore[attr-defined]
    assert "Friday the 15th" in current and "Thursday" not in current  # its comment: "Friday only"
    both = facts.context("ann", "When was my deadline originally?", now, 2000).text  # type: ignore[attr-defined]
    assert "Thursday the 14th" in both and "Friday the 15th" in both  # and "originally?" shows both


#: The examples that stand alone (each defines its own times), as a reader may paste just one of them.
STANDALONE = ('make_design("tiered"', 'make_design("facts"', "load_attacks()")


@pytest.mark.parametrize("marker", STANDALONE)
def test_the_designs_and_facts_examples_run_alone(marker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTREAM_EMBEDDER", raising=False)
    monkeypatch.chdir(tmp_path)
    block = next(b for b in python_blocks(README.read_text(encoding="utf-8")) if marker in b)
    exec(compile(block, f"README.md block with {marker}", "exec"), {"__name__": "__readme__"})
