"""The agent loop: ask for one tool call, run it, show the model its result; chain while it asks.

A step is one request; the answer is one tool call (:mod:`.parse`), executed (:mod:`.tools`), and
the call and its packaged result go into the transcript the next step reads. The chain goes on
while the call requested a heartbeat, or failed (MemGPT gives a failed call another step so the
model can correct it), up to ``limit`` steps; reaching the limit is counted. An answer that stays
unreadable after the runner's retry ends the chain, counted. Every count goes into ``counts``
under the chain's ``prefix`` (``""`` for the agent, ``"sleeptime_"`` for the sleep-time agent).
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from memstream.designs.letta import prompts
from memstream.designs.letta.parse import ToolCall, parse_tool_call
from memstream.designs.letta.queue import Role
from memstream.designs.letta.tools import OwnerMemory, execute, package
from memstream.models import Message, Request, Stage


class Transcript(Protocol):
    """What a chain reads and writes: the messages of the next step, and a place for new ones."""

    def messages(self) -> list[Message]: ...
    def add(self, role: Role, text: str) -> None: ...
    def prepare(self) -> Stage[bool]: ...  # before a step (pressure, eviction); False: no room for a step


def chain_stage(purpose: str, transcript: Transcript, memory: OwnerMemory, allowed: tuple[str, ...], limit: int,
                counts: Counter[str], prefix: str = "") -> Stage[int]:
    """Steps until a call asks for no more, or ``limit``; the number of steps taken."""
    steps = 0
    while True:
        if not (yield from transcript.prepare()):
            counts[prefix + "over_window"] += 1
            return steps
        call: ToolCall | None = yield Request(purpose, transcript.messages(), parse_tool_call)
        steps += 1
        counts[prefix + "steps"] += 1
        if call is None:
            counts[prefix + "unreadable"] += 1
            return steps
        result = execute(call, memory, allowed)
        counts[prefix + "tool_calls"] += 1
        if result.error:
            counts[prefix + "tool_errors"] += 1
            counts[f"{prefix}error:{result.error}"] += 1
        transcript.add("assistant", call.to_json())
        transcript.add("tool", f"{prompts.TOOL_RESULT} {package(result, memory.now)}")
        if not (call.request_heartbeat or result.error):
            return steps
        if steps >= limit:
            counts[prefix + "chain_limit"] += 1
            return steps
        counts[prefix + "heartbeats"] += 1
        transcript.add("system", prompts.HEARTBEAT_OK if result.ok else prompts.HEARTBEAT_FAILED)
