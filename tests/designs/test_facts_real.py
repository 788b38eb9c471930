"""A real model's answers to the facts design's write path, recorded (tests/fixtures/facts_real), replayed.

The offline rules keep the other tests deterministic; this pins what the design makes of what a real
small model said: the same facts, actions and contexts as when it was recorded, every call answered
from the recording (``mode="replay"``: a call that was not recorded fails the test).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from memstream.models.base import ChatModel, Completion, Message
from memstream.models.cache import CachedChatModel
from tests.helpers import FIXTURES, ROOT

RECORDING = FIXTURES / "facts_real"


class Unreachable(ChatModel):
    """The model behind the recording: asking it means a prompt changed since it was recorded."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _generate(self, messages: list[Message], purpose: str, params: dict) -> Completion:
        raise AssertionError(f"{purpose} was not recorded; record again with benchmarks/facts_real.py")


def _benchmark():  # the script as a module
    spec = importlib.util.spec_from_file_location("facts_real", ROOT / "benchmarks" / "facts_real.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not (RECORDING / "report.json").exists(), reason="no recording of a real model")
def test_the_recorded_answers_replay_to_the_same_facts(tmp_path: Path) -> None:
    report = json.loads((RECORDING / "report.json").read_text(encoding="utf-8"))
    shutil.copy(RECORDING / "calls.db", tmp_path / "calls.db")
    chat = CachedChatModel(Unreachable(report["model"]), tmp_path / "calls.db", mode="replay")
    again = _benchmark().run(chat)
    assert again["facts"] == report["facts"] and again["edges"] == report["edges"]
    assert again["contexts"] == report["contexts"]
    assert sum(u["calls"] for u in again["usage"].values()) == sum(u["calls"] for u in report["usage"].values())


@pytest.mark.skipif(not (RECORDING / "report.json").exists(), reason="no recording of a real model")
def test_what_the_small_model_did() -> None:
    """Pinned from the recording (see the README's facts section): Qwen2.5 Coder 1.5B extracted the
    assistant's lines from the first turn, not the user's deadline; it classified the correction as a
    duplicate without naming which fact, twice, so the answer was lost and the correction written as
    new: nothing was superseded. The parser refused the unnamed target instead of guessing one."""
    report = json.loads((RECORDING / "report.json").read_text(encoding="utf-8"))
    texts = [f["text"] for f in report["facts"]]
    assert not any("Thursday" in t for t in texts) and any("Monday March 16" in t for t in texts)
    assert report["edges"] == [] and report["usage"]["facts-classify"]["lost"] >= 1
