"""A chat model that answers chosen purposes from functions and the rest with the offline rules,
recording every call: to pin what a stage does with a given answer, in process, without a server."""

from __future__ import annotations

from collections.abc import Callable

from memstream.models import ChatModel, Completion, Message, OfflineChatModel, SamplingParams


class ScriptedChat(ChatModel):
    """Answers ``purpose`` with ``script[purpose](messages)``; other purposes go to the offline model.
    ``calls`` holds every ``(purpose, messages)`` asked, in order."""

    name = "scripted"

    def __init__(self, script: dict[str, Callable[[list[Message]], str]]) -> None:
        super().__init__()
        self.script = script
        self.calls: list[tuple[str, list[Message]]] = []
        self._offline = OfflineChatModel()

    def _generate(self, messages: list[Message], purpose: str, params: SamplingParams) -> Completion:
        self.calls.append((purpose, messages))
        if purpose in self.script:
            return Completion(self.script[purpose](messages))
        return self._offline._generate(messages, purpose, params)
