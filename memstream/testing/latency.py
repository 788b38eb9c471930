"""The offline rules behind a delay, in process: each request is answered after ``latency_ms`` with at most
``concurrency`` in flight (asyncio), the shape of a remote vLLM server seen from a client. Not a language
model: it measures memstream's waiting, not a model's answers."""

from __future__ import annotations

import asyncio

import memstream.sim  # noqa: F401 - registers every stage's offline rules
from memstream.models import Call, ChatModel, Completion, Message, OfflineChatModel, SamplingParams, run_coroutine


class LatencyChat(ChatModel):
    """The offline rules behind a delay: each request takes ``latency_ms``, ``concurrency`` at a time."""

    def __init__(self, latency_ms: float, concurrency: int) -> None:
        super().__init__()
        self.latency_s, self.concurrency = latency_ms / 1000, concurrency
        self.inner = OfflineChatModel()
        self.name = self.inner.name  # same answers, same cache keys

    def _generate(self, messages: list[Message], purpose: str, params: SamplingParams) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: SamplingParams) -> list[Completion]:
        return run_coroutine(self._answer(calls, params))

    async def _answer(self, calls: list[Call], params: SamplingParams) -> list[Completion]:
        limit = asyncio.Semaphore(self.concurrency)

        async def one(purpose: str, messages: list[Message]) -> Completion:
            async with limit:
                await asyncio.sleep(self.latency_s)
                return self.inner._generate(messages, purpose, params)

        return list(await asyncio.gather(*(one(p, m) for p, m in calls)))
