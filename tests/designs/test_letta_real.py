"""The letta tool loop against a real model, recorded (tests/fixtures/letta, see its README) and replayed.

The offline rules answer the agent's steps in the other tests; this pins what the design makes of what
a small real model actually says when it is handed the tools: which calls run, which fail and are
shown to it, which answers are unreadable, and what ends up in its blocks and archival memory.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from memstream.designs.letta.parse import parse_tool_call
from memstream.designs.letta.tools import ERRORS
from memstream.errors import StructuredOutputError
from memstream.models.base import ChatModel, Completion, Message
from memstream.models.cache import CachedChatModel
from tests.helpers import FIXTURES, ROOT

RECORDING = FIXTURES / "letta"
REPORT = json.loads((RECORDING / "report.json").read_text(encoding="utf-8"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import letta_real  # noqa: E402 - the benchmark that recorded the fixture, run again on its recording


class Recorded(ChatModel):
    """Stands where the recorded model stood: a question that reaches it was not in the recording."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _generate(self, messages: list[Message], purpose: str, params: dict) -> Completion:
        raise AssertionError(f"a {purpose} call was not in the recording")


def test_the_recorded_tool_loop_replays_to_the_same_memory(tmp_path: Path) -> None:
    cache = tmp_path / "calls.db"
    shutil.copyfile(RECORDING / "calls.db", cache)
    again = letta_real.run(CachedChatModel(Recorded(REPORT["model"]), cache, mode="replay"))
    for key in ("counters", "blocks", "archival", "usage"):
        assert again[key] == REPORT[key], key
    errors = {k.removeprefix("error:") for k in again["counters"] if k.startswith("error:")}
    assert errors <= set(ERRORS)


def test_every_recorded_answer_is_a_tool_call_or_refused_with_a_reason(tmp_path: Path) -> None:
    import sqlite3

    rows = sqlite3.connect(RECORDING / "calls.db").execute("SELECT purpose, response FROM calls").fetchall()
    assert rows
    for _, answer in rows:
        try:
            call = parse_tool_call(answer)
        except StructuredOutputError as refused:
            assert str(refused) and "\n" not in str(refused)
            continue
        assert call.tool is None or isinstance(call.tool, str)
