"""How the offline stand-in answers the Letta prompts (rules, not intelligence; they know no domain).

The agent's step, read from the newest messages:

- after a failed call, a write refused for the block's limit goes to archival memory instead; any
  other failure is given up with a short message;
- after the memory-pressure warning, the first sentences of the turns in view before the newest are
  saved to archival memory, asking for a heartbeat (so the newest turn still gets its step);
- otherwise, a turn whose speaker says something about themselves (a sentence with a first-person
  word: I, my, we, ...) is kept as ``Speaker: that sentence`` (its first such, cut to 20 words) in
  the ``human`` block (the first writable block if there is none), or in archival memory when the
  block has no room; any other turn gets ``send_message`` (a listening agent's note, counted and
  dropped).

The sleep-time agent: the fullest writable block past 80% of its limit has its oldest lines moved
to archival memory (one call, with a heartbeat) and is rewritten with the rest (a second call);
else a block with repeated lines is rewritten without the repeats; else it finishes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from memstream.designs.letta import prompts
from memstream.designs.offline import first_sentence
from memstream.models import Message, register_rules

#: A block past this share of its limit is thinned by the sleep-time rule, down to ``KEEP``.
FULL, KEEP = 0.8, 0.5
_BLOCK = re.compile(r"<([^<>\s/]+)>\n<description>\n.*?\n</description>\n<metadata>\n(.*?)\n</metadata>\n"
                    r"<value>\n(.*?)\n</value>\n</\1>", re.DOTALL)
_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'll|I'd|my|My|me|mine|we|We|our|Our|us)\b")
_STAMP = re.compile(r"^\[[^\]]*\]\s*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_PREFIXES = (prompts.TOOL_RESULT, prompts.HEARTBEAT, prompts.ALERT)


@dataclass(frozen=True)
class Seen:
    """A block as the prompt shows it."""

    label: str
    value: str
    current: int
    limit: int
    read_only: bool


def blocks_in(system: str) -> list[Seen]:
    out = []
    for label, meta, value in _BLOCK.findall(system):
        sizes = dict(re.findall(r"- (\w+)=(\S+)", meta))
        out.append(Seen(label, value, int(sizes.get("chars_current", len(value))),
                        int(sizes.get("chars_limit", 0)), sizes.get("read_only") == "true"))
    return out


def call(tool: str, heartbeat: bool = False, **arguments: object) -> str:
    return json.dumps({"tool": tool, "arguments": arguments, "request_heartbeat": heartbeat})


def answer_step(messages: list[Message]) -> str:
    blocks = blocks_in(messages[0]["content"]) if messages else []
    last = messages[-1]["content"] if messages else ""
    if last.startswith(prompts.HEARTBEAT_FAILED):
        failed = _call_before(messages)
        content = failed.get("arguments", {}).get("content")
        if "character limit" in messages[-2]["content"] and isinstance(content, str) and content.strip():
            return call("archival_memory_insert", content=content)
        return call("send_message", message="I could not save that.")
    turns = [m["content"] for m in messages if _is_turn(m)]
    if last.startswith(prompts.ALERT) and len(turns) > 1:
        return call("archival_memory_insert", True, content="\n".join(first_sentence(t) for t in turns[:-1]))
    turn = turns[-1] if turns else ""
    speaker, _, said = _STAMP.sub("", turn).partition(": ")
    if not said:
        speaker, said = "The user", speaker
    about_self = next((x for x in _SENTENCE.split(said) if _FIRST_PERSON.search(x)), None)
    if about_self is None:
        return call("send_message", message="Noted.")
    content = f"{speaker}: {first_sentence(about_self)}"
    target = _target(blocks)
    if target is None or target.current + 1 + len(content) > target.limit:
        return call("archival_memory_insert", content=content)
    return call("core_memory_append", label=target.label, content=content)


def answer_sleeptime(messages: list[Message]) -> str:
    blocks = [b for b in blocks_in(messages[0]["content"]) if not b.read_only and b.limit]
    full = max((b for b in blocks if b.current > FULL * b.limit), key=lambda b: b.current / b.limit, default=None)
    if full is not None:
        lines = full.value.split("\n")
        start, size = len(lines), 0
        while start > 0 and size + len(lines[start - 1]) + 1 <= KEEP * full.limit:
            start -= 1
            size += len(lines[start]) + 1
        if _call_before(messages).get("tool") == "archival_memory_insert":
            return call("memory_rethink", label=full.label, new_memory="\n".join(lines[start:]))
        return call("archival_memory_insert", True, content="\n".join(lines[:start]))
    for b in blocks:
        lines = b.value.split("\n")
        unique = list(dict.fromkeys(lines))
        if len(unique) < len(lines):
            return call("memory_rethink", label=b.label, new_memory="\n".join(unique))
    return call("memory_finish_edits")


def _is_turn(m: Message) -> bool:
    return m.get("role") == "user" and not m["content"].startswith(_PREFIXES)


def _target(blocks: list[Seen]) -> Seen | None:
    writable = [b for b in blocks if not b.read_only]
    return next((b for b in writable if b.label == "human"), writable[0] if writable else None)


def _call_before(messages: list[Message]) -> dict:
    """The agent's last call in the messages (its JSON), or {}."""
    for m in reversed(messages):
        if m.get("role") == "assistant":
            try:
                value = json.loads(m["content"])
            except json.JSONDecodeError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


register_rules({prompts.STEP_PURPOSE: answer_step, prompts.SLEEPTIME_PURPOSE: answer_sleeptime})
