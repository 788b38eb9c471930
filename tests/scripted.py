"""A chat model for tests that answers from per-purpose functions and records every call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memstream.models.base import ChatModel, Completion, Message
from memstream.models.offline import OfflineChatModel, prompt_of


class ScriptedChat(ChatModel):
    """Answers ``purpose`` with ``script[purpose](messages)``; other purposes go to the offline model."""

    name = "scripted"

    def __init__(self, script: dict[str, Callable[[list[Message]], str]]) -> None:
        super().__init__()
        self.script = script
        self.calls: list[tuple[str, list[Message]]] = []
        self._offline = OfflineChatModel()

    def _generate(self, messages: list[Message], purpose: str, params: dict[str, Any]) -> Completion:
        self.calls.append((purpose, messages))
        if purpose in self.script:
            return Completion(self.script[purpose](messages))
        return self._offline._generate(messages, purpose, params)


def statements(messages: list[Message]) -> dict[int, str]:
    """The numbered statements of an insights prompt."""
    out = {}
    for line in prompt_of(messages).splitlines():
        head, _, rest = line.partition(". ")
        if head.isdigit():
            out[int(head)] = rest
    return out
