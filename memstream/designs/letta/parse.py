"""Reading the agent's answer as one tool call, strictly.

The answer must be one JSON object (optionally inside one ```json fence) with at most the keys
``tool`` (the tool's name), ``arguments`` (an object) and ``request_heartbeat`` (true or false).
Anything else (free text, two objects, a list, an unknown key, arguments that are not an object)
is unreadable: the parser raises and the runner asks again showing the error. A call that is
readable but names no tool, or a tool that does not exist, or lacks an argument, is *not* a parse
error: it is executed as a failed call whose error message the model sees (as Letta returns a
failed function's error to the agent), and counted. Through a tools API the call arrives as
``{"tool": NAME, "arguments": {...}}`` with ``request_heartbeat`` among the arguments (MemGPT's
place for it); it is lifted out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from memstream.errors import StructuredOutputError

KEYS = ("tool", "arguments", "request_heartbeat")
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class ToolCall:
    """What the model asked for: a tool's name (None if it named none), its arguments, and whether it
    wants another step after this one (a heartbeat)."""

    tool: str | None
    arguments: dict[str, Any] = field(default_factory=dict)
    request_heartbeat: bool = False

    def to_json(self) -> str:
        return json.dumps({"tool": self.tool, "arguments": self.arguments,
                           "request_heartbeat": self.request_heartbeat}, ensure_ascii=False)


class ToolCallAnswer(BaseModel):
    """The answer's schema, sent to a back-end that can constrain its output (the parser never relies on it)."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any]
    request_heartbeat: bool = False


def parse_tool_call(answer: str) -> ToolCall:
    text = answer.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise StructuredOutputError(f"the answer is not one JSON object ({e.__class__.__name__}: "
                                    f"{str(e)[:80]}); answer with one tool call as JSON") from None
    if not isinstance(value, dict):
        raise StructuredOutputError(f"the answer is JSON {type(value).__name__}, not an object with a tool")
    unknown = [k for k in value if k not in KEYS]
    if unknown:
        raise StructuredOutputError(f"unknown key {unknown[0]!r} in the tool call; use only {', '.join(KEYS)}")
    tool = value.get("tool")
    if tool is not None and not isinstance(tool, str):
        raise StructuredOutputError(f"tool must be a tool's name (text), not {type(tool).__name__}")
    arguments = value.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise StructuredOutputError(f"arguments must be an object, not {type(arguments).__name__}")
    if "request_heartbeat" in arguments and "request_heartbeat" not in value:  # MemGPT's place for it (tools API)
        arguments = dict(arguments)
        value["request_heartbeat"] = arguments.pop("request_heartbeat")
    heartbeat = value.get("request_heartbeat", False)
    if not isinstance(heartbeat, bool):
        raise StructuredOutputError(f"request_heartbeat must be true or false, not {heartbeat!r}")
    return ToolCall(tool.strip() or None if tool else None, arguments, heartbeat)
