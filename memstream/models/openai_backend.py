"""OpenAI-compatible back-ends (OpenAI, vLLM, Ollama, llama.cpp server) through the ``openai`` package.

Configuration comes from arguments or the environment (OPENAI_API_KEY,
OPENAI_BASE_URL). Rate limits (429), server errors (5xx), timeouts and dropped
connections are retried with exponential backoff; other errors surface at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from memstream.errors import MemstreamError
from memstream.models.base import ChatModel, Completion, Embedder, Message

log = logging.getLogger(__name__)
T = TypeVar("T")


def _client(base_url: str | None, api_key: str | None, timeout: float, *, asynchronous: bool = False):  # noqa: ANN202
    import openai

    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not api_key:
        if base_url is None:
            raise MemstreamError(
                "OPENAI_API_KEY is not set; export it (or OPENAI_BASE_URL for a local server), "
                "or use the offline model with --llm offline"
            )
        api_key = "no-key"  # local servers (vLLM, Ollama, llama.cpp) accept any key
    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)


def _is_transient(error: Exception) -> bool:
    import openai

    if isinstance(error, openai.APIConnectionError | openai.APITimeoutError | openai.RateLimitError):
        return True
    return isinstance(error, openai.APIStatusError) and error.status_code >= 500


def with_retries(call: Callable[[], T], *, retries: int, backoff_s: float, what: str) -> T:
    """Run ``call``, retrying transient API errors with exponential backoff."""
    for attempt in range(retries + 1):
        try:
            return call()
        except Exception as error:  # noqa: BLE001 - filtered by _is_transient
            if not _is_transient(error) or attempt == retries:
                raise MemstreamError(f"{what} failed: {type(error).__name__}: {error}") from error
            delay = backoff_s * (2**attempt)
            log.warning("%s: %s; retry %d/%d in %.2fs", what, type(error).__name__,
                        attempt + 1, retries, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


async def with_retries_async(call: Callable[[], Awaitable[T]], *, retries: int, backoff_s: float, what: str) -> T:
    """:func:`with_retries` for coroutines."""
    for attempt in range(retries + 1):
        try:
            return await call()
        except Exception as error:  # noqa: BLE001 - filtered by _is_transient
            if not _is_transient(error) or attempt == retries:
                raise MemstreamError(f"{what} failed: {type(error).__name__}: {error}") from error
            delay = backoff_s * (2**attempt)
            log.warning("%s: %s; retry %d/%d in %.2fs", what, type(error).__name__, attempt + 1, retries, delay)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable")


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion, also from inside a running event loop (a Jupyter kernel)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class OpenAIChat(ChatModel):
    """Chat completions from an OpenAI-compatible endpoint; batches run concurrently."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 4,
        backoff_s: float = 0.5,
        concurrency: int = 8,
    ) -> None:
        super().__init__()
        self.name = f"openai:{model}"
        self.model = model
        self.retries = retries
        self.backoff_s = backoff_s
        self.concurrency = concurrency
        self._client = _client(base_url, api_key, timeout)
        self._settings = (base_url, api_key, timeout)

    def _generate(self, messages: list[Message], purpose: str, params: dict[str, Any]) -> Completion:
        start = time.perf_counter()
        response = with_retries(
            lambda: self._client.chat.completions.create(
                model=self.model, messages=messages, **params  # type: ignore[arg-type]
            ),
            retries=self.retries, backoff_s=self.backoff_s, what=f"{self.name} ({purpose})",
        )
        usage = response.usage
        return Completion(
            text=response.choices[0].message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_s=time.perf_counter() - start,
        )

    def _generate_batch(
        self, batch: list[list[Message]], purpose: str, params: dict[str, Any]
    ) -> list[Completion]:
        """A batch is issued concurrently (asyncio, at most ``concurrency`` requests in flight), so a
        serving engine such as vLLM can batch it; answers come back in order."""
        if len(batch) <= 1:
            return [self._generate(m, purpose, params) for m in batch]
        return run_coroutine(self._abatch(batch, purpose, params))

    async def _abatch(self, batch: list[list[Message]], purpose: str, params: dict[str, Any]) -> list[Completion]:
        client = _client(*self._settings, asynchronous=True)
        limit = asyncio.Semaphore(self.concurrency)

        async def one(messages: list[Message]) -> Completion:
            async with limit:
                start = time.perf_counter()
                response = await with_retries_async(
                    lambda: client.chat.completions.create(model=self.model, messages=messages, **params),
                    retries=self.retries, backoff_s=self.backoff_s, what=f"{self.name} ({purpose})")
                usage = response.usage
                return Completion(text=response.choices[0].message.content or "",
                                  prompt_tokens=usage.prompt_tokens if usage else 0,
                                  completion_tokens=usage.completion_tokens if usage else 0,
                                  latency_s=time.perf_counter() - start)

        try:
            return list(await asyncio.gather(*(one(m) for m in batch)))
        finally:
            await client.close()


class OpenAIEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible endpoint. ``dim`` is learned from the first call."""

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key: str | None = None,
        timeout: float = 60.0, retries: int = 4, backoff_s: float = 0.5, batch_size: int = 256,
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.retries = retries
        self.backoff_s = backoff_s
        self.batch_size = batch_size
        self._client = _client(base_url, api_key, timeout)
        self.dim = int(self._embed(["dimension probe"]).shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            response = with_retries(
                lambda chunk=chunk: self._client.embeddings.create(model=self.model, input=chunk),
                retries=self.retries, backoff_s=self.backoff_s, what=f"{self.name} (embedding)",
            )
            rows.extend(d.embedding for d in sorted(response.data, key=lambda d: d.index))
        return np.asarray(rows, dtype=np.float32)
