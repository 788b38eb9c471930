"""The write gate's answers from a real small model, recorded (tests/fixtures/gate, see its README) and
replayed: each recorded verdict is read again through the strict parser and the stage, from the cache
alone (a call that was not recorded fails the test)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memstream.errors import ReplayMissError
from memstream.models import CachedChatModel, ChatModel, Completion, run_direct
from memstream.trust import gate_stage
from tests.helpers import FIXTURES

RECORDING = FIXTURES / "gate"
REPORT = json.loads((RECORDING / "report.json").read_text(encoding="utf-8")) if (RECORDING / "report.json").exists() \
    else None
pytestmark = pytest.mark.skipif(REPORT is None, reason="no recording in tests/fixtures/gate")
SOURCE = "turn from user"


class Unreachable(ChatModel):
    """The recorded model, never reached: every answer must come from the recording."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _generate(self, messages, purpose, params) -> Completion:
        raise AssertionError("a gate call that was not recorded")


@pytest.fixture
def recorded(tmp_path: Path) -> CachedChatModel:
    shutil.copy(RECORDING / "calls.db", tmp_path / "calls.db")
    return CachedChatModel(Unreachable(REPORT["model"]), tmp_path / "calls.db", mode="replay")


def test_every_recorded_verdict_replays_as_recorded(recorded: CachedChatModel) -> None:
    texts = REPORT["model_gate"]["texts"]
    assert texts and len(texts) == REPORT["sampled"]
    for text in texts:
        verdicts = run_direct(gate_stage(text["turns"], sources=[SOURCE] * len(text["turns"]), by=recorded.name),
                              recorded)
        assert [{"allowed": v.allowed, "reason": v.reason, "failed": v.failed} for v in verdicts] == text["verdicts"]


def test_the_report_s_figures_are_what_the_verdicts_say() -> None:
    r = REPORT["model_gate"]
    attacks = [t for t in r["texts"] if t["kind"] == "attack"]
    benign = [t for t in r["texts"] if t["kind"] == "benign"]
    blocked = lambda ts: sum(any(not v["allowed"] for v in t["verdicts"]) for t in ts)  # noqa: E731
    assert r["attacks_blocked"] == round(blocked(attacks) / max(len(attacks), 1), 4)
    assert r["benign_blocked"] == round(blocked(benign) / max(len(benign), 1), 4)


def test_a_text_not_recorded_is_a_replay_miss_not_a_guess(recorded: CachedChatModel) -> None:
    with pytest.raises(ReplayMissError):
        run_direct(gate_stage(["a text nobody recorded"], sources=[SOURCE]), recorded)
