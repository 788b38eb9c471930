"""The agent's memory tools, executed: each call's result is a message the model reads next.

The tools are Letta's base and memory tools, with their documented arguments:
``core_memory_append(label, content)``, ``core_memory_replace(label, old_content, new_content)``
(every occurrence of an exact string; ``new_content`` "" deletes), ``memory_insert(label, new_str,
insert_line=-1)`` (at a line number, -1 the end), ``memory_rethink(label, new_memory)`` (the block
rewritten whole), ``archival_memory_insert(content)``, ``archival_memory_search(query, page=0)``,
``conversation_search(query, page=0)``, ``send_message(message)``, and, for the sleep-time agent,
``memory_finish_edits()``.

A call that cannot be done is not an exception: it is a failed result, with Letta's kind of error
message, that the model sees, and its kind is counted (:data:`ERRORS`): a call naming no tool, an
unknown tool, a missing or mistyped argument, a block that does not exist, a replace whose string
is absent, a write past a block's character limit, an edit of a read-only block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memstream.designs.letta.blocks import MemoryBlock
from memstream.designs.letta.parse import ToolCall

#: The kinds of failed call, as counted.
ERRORS = ("no_tool", "unknown_tool", "missing_argument", "bad_argument", "no_block", "replace_absent",
          "over_limit", "read_only")
#: The errors that drop an edit the model meant to make (the scenario evals' ``dropped_edits``).
EDIT_ERRORS = ("no_block", "replace_absent", "over_limit", "read_only")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()

    def signature(self) -> str:
        args = [*self.required, *(f"{a}?" for a in self.optional)]
        return f"{self.name}({', '.join(args)}): {self.description}"

    def spec(self) -> dict[str, Any]:
        """The tool as an OpenAI function spec, with MemGPT's ``request_heartbeat`` among its parameters."""
        properties: dict[str, Any] = {a: {"type": "integer" if a in WHOLE_NUMBERS else "string"}
                                      for a in (*self.required, *self.optional)}
        properties["request_heartbeat"] = {"type": "boolean", "description": "true to take another step after this"}
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": {
            "type": "object", "properties": properties, "required": list(self.required)}}}


#: Arguments that are whole numbers (the rest are text).
WHOLE_NUMBERS = ("insert_line", "page")


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("send_message", "send a message to the user", ("message",)),
    Tool("core_memory_append", "append content to the end of the core memory block with this label",
         ("label", "content")),
    Tool("core_memory_replace", "replace every occurrence of the exact old_content in a block with new_content "
         "(new_content \"\" deletes it)", ("label", "old_content", "new_content")),
    Tool("memory_insert", "insert new_str into a block after line insert_line (0 = at the start, -1 = at the end)",
         ("label", "new_str"), ("insert_line",)),
    Tool("memory_rethink", "rewrite a block whole with new_memory (to reorganise it)", ("label", "new_memory")),
    Tool("archival_memory_insert", "store content in archival memory (unlimited, searched, never in context "
         "by itself)", ("content",)),
    Tool("archival_memory_search", "search archival memory; results come a page at a time (page 0 first)",
         ("query",), ("page",)),
    Tool("conversation_search", "search the whole past conversation, including messages no longer in view; "
         "a page at a time", ("query",), ("page",)),
    Tool("memory_finish_edits", "end this round of memory edits", ()),
)}
#: The agent's tools (everything but the sleep-time agent's ``memory_finish_edits``).
AGENT_TOOLS = tuple(t for t in TOOLS if t != "memory_finish_edits")
#: The sleep-time agent's tools: the block edits, archival insert, and finishing.
SLEEPTIME_TOOLS = ("core_memory_append", "core_memory_replace", "memory_insert", "memory_rethink",
                   "archival_memory_insert", "memory_finish_edits")


class OwnerMemory(Protocol):
    """What the tools act on: one owner's blocks, archival and recall storage, at one moment."""

    now: datetime

    def block(self, label: str) -> MemoryBlock | None: ...
    def labels(self) -> list[str]: ...
    def edited(self, block: MemoryBlock) -> None: ...
    def archival_insert(self, content: str) -> int: ...
    def search(self, query: str, archival: bool, page: int) -> str: ...
    def reply(self, message: str) -> None: ...


@dataclass(frozen=True)
class Result:
    """A call's outcome: its message for the model, and the kind of error if it failed."""

    message: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Failed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def execute(call: ToolCall, memory: OwnerMemory, allowed: tuple[str, ...] = AGENT_TOOLS) -> Result:
    """Run ``call`` on ``memory``; a result whatever the call (a failure is a result with its error kind)."""
    try:
        return Result(_run(call, memory, allowed))
    except Failed as failed:
        return Result(f"Error: {failed}", failed.kind)


def package(result: Result, now: datetime) -> str:
    """A result as MemGPT returns a function's output to the model: status, message, time."""
    return json.dumps({"status": "OK" if result.ok else "Failed", "message": result.message,
                       "time": f"{now:%Y-%m-%d %I:%M:%S %p %Z}".strip()}, ensure_ascii=False)


def _run(call: ToolCall, memory: OwnerMemory, allowed: tuple[str, ...]) -> str:
    if call.tool is None:
        raise Failed("no_tool", f"the call names no tool; name one of: {', '.join(allowed)}")
    tool = TOOLS.get(call.tool)
    if tool is None or call.tool not in allowed:
        raise Failed("unknown_tool", f"no tool named {call.tool!r}; the tools are: {', '.join(allowed)}")
    missing = [a for a in tool.required if a not in call.arguments]
    if missing:
        raise Failed("missing_argument", f"{tool.name} needs the argument {missing[0]!r}")
    extra = [a for a in call.arguments if a not in tool.required + tool.optional]
    if extra:
        raise Failed("bad_argument", f"{tool.name} takes no argument {extra[0]!r}")
    a = call.arguments
    match tool.name:
        case "memory_finish_edits":
            return "Edits finished."
        case "send_message":
            memory.reply(_text(a, "message"))
            return "Sent message successfully."
        case "archival_memory_insert":
            content = _text(a, "content")
            if not content.strip():
                raise Failed("bad_argument", "archival_memory_insert needs non-empty content")
            memory.archival_insert(content)
            return "Inserted into archival memory."
        case "archival_memory_search" | "conversation_search":
            return memory.search(_text(a, "query"), tool.name == "archival_memory_search", _page(a))
    block = _writable(memory, _text(a, "label"))
    match tool.name:
        case "core_memory_append":
            value = block.value + "\n" + _text(a, "content") if block.value else _text(a, "content")
        case "core_memory_replace":
            old, new = _text(a, "old_content"), _text(a, "new_content")
            if not old or old not in block.value:
                raise Failed("replace_absent", f"old_content {old!r} not found in block {block.label!r}")
            value = block.value.replace(old, new)
        case "memory_insert":
            value = _insert(block.value, _text(a, "new_str"), a.get("insert_line", -1))
        case _:  # memory_rethink
            value = _text(a, "new_memory")
    if len(value) > block.limit:
        raise Failed("over_limit", f"edit failed: exceeds the {block.limit} character limit of block "
                     f"{block.label!r} (requested {len(value)})")
    block.value = value
    memory.edited(block)
    return f"Block {block.label!r} edited ({len(value)}/{block.limit} characters)."


def _text(arguments: dict[str, Any], name: str) -> str:
    value = arguments[name]
    if not isinstance(value, str):
        raise Failed("bad_argument", f"{name} must be text, not {type(value).__name__}")
    return value


def _page(arguments: dict[str, Any]) -> int:
    page = arguments.get("page", 0)
    if page is None:
        return 0
    if isinstance(page, bool) or not isinstance(page, int) or page < 0:
        raise Failed("bad_argument", f"page must be a whole number from 0, not {page!r}")
    return page


def _writable(memory: OwnerMemory, label: str) -> MemoryBlock:
    block = memory.block(label)
    if block is None:
        raise Failed("no_block", f"no memory block labelled {label!r}; the blocks are: {', '.join(memory.labels())}")
    if block.read_only:
        raise Failed("read_only", f"block {label!r} is read-only")
    return block


def _insert(value: str, new: str, at: Any) -> str:
    if isinstance(at, bool) or not isinstance(at, int):
        raise Failed("bad_argument", f"insert_line must be a whole number, not {at!r}")
    lines = value.split("\n") if value else []
    if at < -1 or at > len(lines):
        raise Failed("bad_argument", f"insert_line {at} is outside the block's lines (0 to {len(lines)}, or -1)")
    position = len(lines) if at == -1 else at
    return "\n".join(lines[:position] + new.split("\n") + lines[position:])
