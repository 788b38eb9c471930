"""OpenAI-compatible back-ends (OpenAI, vLLM, Ollama, llama.cpp server) through the ``openai`` package.

Configuration comes from arguments or the environment (OPENAI_API_KEY,
OPENAI_BASE_URL). Rate limits (429), server errors (5xx), timeouts and dropped
connections are retried with exponential backoff; other errors surface at once.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from memstream.errors import MemstreamError
from memstream.models.base import Call, ChatModel, Completion, Embedder, Message
from memstream.models.parsing import ANSWER_SCHEMAS

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


class FormatRefused(Exception):  # noqa: N818 - a signal, not a failure to report
    """The server refused the ``response_format`` it was sent (it takes another form, or none)."""


def _refuses_format(error: Exception) -> bool:
    import openai

    text = str(error).lower()
    return (isinstance(error, openai.APIStatusError) and error.status_code in (400, 422, 500, 501)
            and ("response_format" in text or "json_schema" in text or "json_object" in text))


def with_retries(call: Callable[[], T], *, retries: int, backoff_s: float, what: str) -> T:
    """Run ``call``, retrying transient API errors with exponential backoff."""
    for attempt in range(retries + 1):
        try:
            return call()
        except Exception as error:  # noqa: BLE001 - filtered by _is_transient
            if _refuses_format(error):
                raise FormatRefused(str(error)) from error
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
            if _refuses_format(error):
                raise FormatRefused(str(error)) from error
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


#: Seconds the client waits for one answer, and answers in flight at once; a slow local server
#: (llama.cpp on a laptop) wants a longer timeout and fewer in flight, vLLM more in flight.
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_CONCURRENCY = 8


def setting(value: float | None, variable: str, default: float, what: str) -> float:
    """``value``, else the environment variable, else ``default``; a bad value is one clear error."""
    if value is None:
        raw = os.environ.get(variable)
        if raw is None or not raw.strip():
            return default
        try:
            value = float(raw)
        except ValueError:
            raise MemstreamError(f"{variable}={raw!r} is not a number; set it to {what}") from None
    if not math.isfinite(value) or value <= 0:
        raise MemstreamError(f"{what} must be a positive number, not {value!r}")
    return value


def completion_of(response: Any, started: float) -> Completion:
    """The answer in a chat response, whatever shape the server gave it; MemstreamError if none."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise MemstreamError(f"the server answered with no choices ({str(response)[:80]!r})")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    usage = getattr(response, "usage", None)
    return Completion(text=content if isinstance(content, str) else "",
                      prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                      completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                      latency_s=time.perf_counter() - started)


#: How an answer's JSON schema is sent, most constraining first: OpenAI and vLLM take ``json_schema``;
#: llama.cpp's server refuses it and takes a schema inside ``json_object``; ``plain`` sends none.
STRUCTURED_MODES = ("json_schema", "json_object", "plain")


class OpenAIChat(ChatModel):
    """Chat completions from an OpenAI-compatible endpoint; batches run concurrently.

    Where a purpose has an answer schema (``ANSWER_SCHEMAS``), it is sent as ``response_format`` so
    the server constrains its decoding; a server that refuses one form is asked in the next
    (``STRUCTURED_MODES``) and the form that worked is kept for the rest of the run
    (``structured_mode``). Each request carries its purpose in an ``X-Memstream-Purpose`` header
    (servers ignore it; a proxy or a test server can read it).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        retries: int = 4,
        backoff_s: float = 0.5,
        concurrency: int | None = None,
    ) -> None:
        super().__init__()
        self.name = f"openai:{model}"
        self.model = model
        self.retries = retries
        self.backoff_s = backoff_s
        timeout = setting(timeout, "MEMSTREAM_TIMEOUT", DEFAULT_TIMEOUT_S, "the timeout in seconds (--timeout)")
        self.concurrency = int(setting(concurrency, "MEMSTREAM_CONCURRENCY", DEFAULT_CONCURRENCY,
                                       "the number of requests in flight (--concurrency)"))
        self.timeout = timeout
        self.structured_mode = os.environ.get("MEMSTREAM_STRUCTURED", STRUCTURED_MODES[0])
        if self.structured_mode not in STRUCTURED_MODES:
            raise MemstreamError(f"MEMSTREAM_STRUCTURED={self.structured_mode!r}; use one of {STRUCTURED_MODES}")
        _client(base_url, api_key, timeout)  # a missing key is one clear error now, not at the first call
        self._settings = (base_url, api_key, timeout)

    def _request(self, purpose: str, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        request = {"model": self.model, "messages": messages, "extra_headers": {"X-Memstream-Purpose": purpose},
                   **params}
        schema = ANSWER_SCHEMAS.get(purpose)
        if schema is not None and self.structured_mode == "json_schema":
            name = re.sub(r"[^a-zA-Z0-9_-]", "_", purpose)
            request["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        elif schema is not None and self.structured_mode == "json_object":
            request["response_format"] = {"type": "json_object", "schema": schema}
        return request

    def _refused(self, mode: str, error: FormatRefused) -> None:
        """The server refused ``mode``: step down to the next form (once per form, whoever noticed first)."""
        if self.structured_mode == mode:
            self.structured_mode = STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]
            log.warning("%s refused response_format %s (%s); using %s", self.name, mode, str(error)[:80],
                        self.structured_mode)

    def _generate(self, messages: list[Message], purpose: str, params: dict[str, Any]) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: dict[str, Any]) -> list[Completion]:
        """A batch is issued concurrently (asyncio, at most ``concurrency`` requests in flight), so a
        serving engine such as vLLM can batch it; answers come back in order."""
        return run_coroutine(self._abatch(calls, params))

    async def _abatch(self, calls: list[Call], params: dict[str, Any]) -> list[Completion]:
        client = _client(*self._settings, asynchronous=True)
        limit = asyncio.Semaphore(self.concurrency)

        async def one(purpose: str, messages: list[Message]) -> Completion:
            async with limit:
                while True:
                    start, mode = time.perf_counter(), self.structured_mode
                    try:
                        response = await with_retries_async(
                            lambda: client.chat.completions.create(**self._request(purpose, messages, params)),
                            retries=self.retries, backoff_s=self.backoff_s, what=f"{self.name} ({purpose})")
                        return completion_of(response, start)
                    except FormatRefused as error:
                        if mode == "plain":
                            raise MemstreamError(f"{self.name} ({purpose}) failed: {error}") from None
                        self._refused(mode, error)

        try:
            return list(await asyncio.gather(*(one(p, m) for p, m in calls)))
        finally:
            await client.close()


class OpenAIEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible endpoint. ``dim`` is learned from the first call."""

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key: str | None = None,
        timeout: float | None = None, retries: int = 4, backoff_s: float = 0.5, batch_size: int = 256,
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.retries = retries
        self.backoff_s = backoff_s
        self.batch_size = batch_size
        timeout = setting(timeout, "MEMSTREAM_TIMEOUT", DEFAULT_TIMEOUT_S, "the timeout in seconds (--timeout)")
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
