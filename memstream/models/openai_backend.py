"""OpenAI-compatible back-ends (OpenAI, vLLM, Ollama, llama.cpp server) through the ``openai`` package.

Configuration comes from arguments or the environment (OPENAI_API_KEY,
OPENAI_BASE_URL). Rate limits (429), server errors (5xx), timeouts and dropped
connections are retried, a bounded number of times, with exponential backoff or the
server's ``Retry-After``; other errors fail the call at once; a run of failed calls
opens the model's circuit breaker (:mod:`memstream.models.endpoint`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import numbers
import os
import re
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import numpy as np

from memstream.errors import CallsFailedError, EndpointFailingError, MemstreamError
from memstream.files import JsonObject
from memstream.models import endpoint
from memstream.models.base import (
    REQUESTS_IN_FLIGHT,
    Call,
    ChatModel,
    Completion,
    Embedder,
    Failure,
    Message,
    Outcome,
    PurposeUsage,
    SamplingParams,
)
from memstream.models.bounds import answer_tokens, bounded_schema
from memstream.models.env import setting
from memstream.models.layout import issue_order
from memstream.models.parsing import ANSWER_SCHEMAS, ANSWER_TOOLS, tool_call_text
from memstream.models.probe import (
    PROBE_MAX_TOKENS,
    PROBE_MESSAGES,
    PROBE_PURPOSE,
    PROBE_SCHEMA,
    STRUCTURED_MODES,
    STRUCTURED_SETTINGS,
    ProbeResult,
    probe,
)

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)
T = TypeVar("T")


@overload
def _client(base_url: str | None, api_key: str | None, timeout: float, *,
            asynchronous: Literal[False] = False) -> openai.OpenAI: ...
@overload
def _client(base_url: str | None, api_key: str | None, timeout: float, *,
            asynchronous: Literal[True]) -> openai.AsyncOpenAI: ...
def _client(base_url: str | None, api_key: str | None, timeout: float, *,
            asynchronous: bool = False) -> openai.OpenAI | openai.AsyncOpenAI:
    """A client of the OpenAI-compatible endpoint (openai imported here: a run on the offline model
    never loads it)."""
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


def _abandoned(error: Exception) -> bool:
    """Whether the client gave up waiting (the server may still be generating the answer)."""
    import openai

    return isinstance(error, openai.APITimeoutError)


def _is_transient(error: Exception) -> bool:
    import openai

    if isinstance(error, openai.APIConnectionError | openai.APITimeoutError | openai.RateLimitError):
        return True
    return isinstance(error, openai.APIStatusError) and error.status_code >= 500


class FormatRefused(Exception):  # a signal, not a failure to report
    """The server refused the ``response_format`` it was sent (it takes another form, or none)."""


def _refuses_format(error: Exception) -> bool:
    import openai

    text = str(error).lower()
    return (isinstance(error, openai.APIStatusError) and error.status_code in (400, 422, 500, 501)
            and ("response_format" in text or "json_schema" in text or "json_object" in text))


def _server_error(error: Exception) -> bool:
    import openai

    return isinstance(error, openai.APIStatusError) and error.status_code >= 500


def _refuses_tools(error: Exception) -> bool:
    import openai

    text = str(error).lower()
    return (isinstance(error, openai.APIStatusError) and error.status_code in (400, 422, 500, 501)
            and "tool" in text)


def with_attempts(call: Callable[[], T], *, attempts: int, backoff_s: float, what: str) -> T:
    """Run ``call``, sending it at most ``attempts`` times while its errors are transient, waiting
    between them as :func:`~memstream.models.endpoint.backoff_s` says (``Retry-After`` honoured)."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception as error:  # filtered by _is_transient
            if _refuses_format(error):
                raise FormatRefused(str(error)) from error
            delay = wait_before_retry(error, attempt, attempts, backoff_s)
            if delay is None:
                raise MemstreamError(f"{what} failed: {describe(error)}") from error
            log.warning("%s: %s; attempt %d/%d in %.2fs", what, type(error).__name__, attempt + 2, attempts, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def wait_before_retry(error: Exception, attempt: int, attempts: int, base_s: float) -> float | None:
    """Seconds to wait before sending again after ``error`` on attempt ``attempt`` (from 0); None
    when the request has failed for good (not transient, attempts spent, or a long Retry-After)."""
    if not _is_transient(error) or attempt + 1 >= attempts:
        return None
    return endpoint.backoff_s(attempt, base_s, error)


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error)[:200]}"


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


#: Token counts above this are not believed (a server's bug, not a bill): counted as 0.
MAX_TOKENS = 10**9


def field(value: Any, name: str) -> Any:
    """``value.name`` or ``value[name]``, whichever the server's JSON became; None if neither."""
    if isinstance(value, dict):
        return value.get(name)
    try:
        return getattr(value, name, None)
    except Exception:  # a property of a half-built object may raise anything
        return None


def tokens(value: Any) -> int:
    """A token count as the server wrote it (an int, a float, a numeric string), 0 when it is not a
    whole number in 0..MAX_TOKENS: usage is counted, never trusted to be well-formed."""
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 12:
        value = int(value.strip())
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number.is_integer() and 0 <= number <= MAX_TOKENS:
            return int(number)
    return 0


def first_choice(choices: Any) -> Any:
    """The first choice, whether ``choices`` is a list (as specified), one object, or keyed by index."""
    if isinstance(choices, list | tuple):
        return choices[0] if choices else None
    if isinstance(choices, dict):
        if "message" in choices or "text" in choices:
            return choices
        return next(iter(choices.values()), None)
    return choices if field(choices, "message") is not None else None


def completion_of(response: Any, started: float) -> Completion:
    """The answer in a chat response, whatever shape the server gave it; MemstreamError if none.

    Every field is read defensively: ``choices`` as a list, an object or missing; a message or its
    content missing or not text; token counts as strings, negative, fractional or absurd.
    """
    choice = first_choice(field(response, "choices"))
    if choice is None:
        raise MemstreamError(f"the server answered with no choices ({str(response)[:80]!r})")
    message = field(choice, "message")
    content = field(message, "content")
    called = field(message, "tool_calls")
    if isinstance(called, list | tuple) and called:  # a tools API's call: the answer is the first one
        function = field(called[0], "function")
        content = tool_call_text(field(function, "name"), field(function, "arguments"))
    if content is None:
        content = field(choice, "text")  # a completions-style answer
    usage = field(response, "usage")
    return Completion(text=content if isinstance(content, str) else "",
                      prompt_tokens=tokens(field(usage, "prompt_tokens")),
                      completion_tokens=tokens(field(usage, "completion_tokens")),
                      latency_s=time.perf_counter() - started,
                      truncated=field(choice, "finish_reason") == "length",
                      prefix_cached_tokens=prefix_cached(response))


def prefix_cached(response: Any) -> int | None:
    """Prompt tokens the server says it served from its prefix cache, or None if it does not say:
    ``usage.prompt_tokens_details.cached_tokens`` (OpenAI, vLLM) or ``timings.cache_n`` (llama.cpp's
    server). llama-cpp-python's server reports neither (its log prints prefix-match hits)."""
    for holder, name in ((field(field(response, "usage"), "prompt_tokens_details"), "cached_tokens"),
                         (field(response, "timings"), "cache_n")):
        value = field(holder, name)
        if value is not None and not isinstance(value, bool) and isinstance(value, int | float | str):
            return tokens(value)
    return None


def response_format(mode: str, name: str, schema: JsonObject) -> JsonObject | None:
    """How an answer's JSON schema is sent in ``mode``: OpenAI and vLLM take ``json_schema``; llama.cpp's
    servers refuse it and take a schema inside ``json_object``; ``plain`` sends none."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": re.sub(r"[^a-zA-Z0-9_-]", "_", name), "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


#: How a purpose's tools (``ANSWER_TOOLS``) are offered: through the tools API, or only as the prompt
#: describes them (the model writes the call as JSON); a server that refuses ``tools`` is asked again without.
TOOL_MODES = ("api", "prompt")


class OpenAIChat(ChatModel):
    """Chat completions from an OpenAI-compatible endpoint; batches run concurrently.

    Where a purpose has an answer schema (``ANSWER_SCHEMAS``), it is sent as ``response_format`` so
    the server constrains its decoding (its arrays and strings bounded: :func:`bounded_schema`); every
    request bounds its answer's tokens by purpose (``max_tokens``: :mod:`memstream.models.bounds`); a
    server that refuses one form is asked in the next
    (``STRUCTURED_MODES``) and the form that worked is kept for the rest of the run
    (``structured_mode``). Which form to start from is chosen by measurement: at the first request
    with a schema, a small probe asks the server in each form (:mod:`memstream.models.probe`;
    ``structured_probe`` says what it found); ``MEMSTREAM_STRUCTURED`` forces one. A purpose with tools
    (``ANSWER_TOOLS``) is sent them through the tools API instead (``MEMSTREAM_TOOLS=api``, the default;
    ``prompt`` never sends them, and a server that refuses them is asked again without), and the tool
    call it returns is the answer's text. Each request carries its purpose in an ``X-Memstream-Purpose``
    header (servers ignore it; a proxy or a test server can read it).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        attempts: int | None = None,
        backoff_s: float = 0.5,
        concurrency: int | None = None,
        breaker: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__()
        self.name = f"openai:{model}"
        self.model, self.seed = model, seed
        self.attempts = endpoint.attempts_setting(attempts)
        self.backoff_s = backoff_s
        self.breaker = endpoint.Breaker(self.name, endpoint.breaker_setting(breaker))
        timeout = setting(timeout, "MEMSTREAM_TIMEOUT", DEFAULT_TIMEOUT_S, "the timeout in seconds (--timeout)")
        self.concurrency = int(setting(concurrency, "MEMSTREAM_CONCURRENCY", DEFAULT_CONCURRENCY,
                                       "the number of requests in flight (--concurrency)"))
        self.timeout = timeout
        chosen = os.environ.get("MEMSTREAM_STRUCTURED", "auto").strip() or "auto"
        if chosen not in STRUCTURED_SETTINGS:
            raise MemstreamError(f"MEMSTREAM_STRUCTURED={chosen!r}; use one of {', '.join(STRUCTURED_SETTINGS)}")
        self.structured_mode = STRUCTURED_MODES[0] if chosen == "auto" else chosen
        self.structured_probe: ProbeResult | None = None if chosen == "auto" else ProbeResult(
            chosen=chosen, forced=True, why="MEMSTREAM_STRUCTURED")
        self.tools_mode = os.environ.get("MEMSTREAM_TOOLS", TOOL_MODES[0])
        if self.tools_mode not in TOOL_MODES:
            raise MemstreamError(f"MEMSTREAM_TOOLS={self.tools_mode!r}; use one of {TOOL_MODES}")
        self._said_abandoned = False
        _client(base_url, api_key, timeout)  # a missing key is one clear error now, not at the first call
        self._settings = (base_url, api_key, timeout)

    @property
    def failing(self) -> str | None:
        return self.breaker.reason

    def _request(self, purpose: str, messages: list[Message], params: SamplingParams) -> JsonObject:
        request: JsonObject = {"model": self.model, "messages": messages,
                               "extra_headers": {"X-Memstream-Purpose": purpose},
                               "max_tokens": answer_tokens(purpose), **params}
        if self.seed is not None:  # OpenAI, vLLM and llama.cpp's server take a sampling seed
            request["seed"] = self.seed
        tools = ANSWER_TOOLS.get(purpose)
        if tools and self.tools_mode == "api":  # the call comes back as a tool call, not constrained text
            request["tools"], request["tool_choice"] = tools, "auto"
            return request
        schema = ANSWER_SCHEMAS.get(purpose)
        form = response_format(self.structured_mode, purpose, bounded_schema(schema)) if schema is not None else None
        if form is not None:
            request["response_format"] = form
        return request

    def _probe_once(self, calls: list[Call]) -> None:
        """Before the first batch that carries a schema, choose the form by asking the server once
        in each (:func:`memstream.models.probe.probe`) and say what was chosen."""
        if self.structured_probe is not None or not any(p in ANSWER_SCHEMAS for p, _ in calls):
            return
        client = _client(*self._settings)
        # The probe is no stage's call (its answers are not counted as calls), but every request it sends is
        # sent: counted in ``requests_sent`` under its own purpose, so a run's traffic adds up.
        sent = self.usage.by_purpose.setdefault(PROBE_PURPOSE, PurposeUsage())

        def ask(mode: str) -> tuple[str, float]:
            sent.requests += 1
            request: JsonObject = {"model": self.model, "messages": PROBE_MESSAGES, "temperature": 0,
                                   "max_tokens": PROBE_MAX_TOKENS,
                                   "extra_headers": {"X-Memstream-Purpose": PROBE_PURPOSE}}
            form = response_format(mode, PROBE_PURPOSE, PROBE_SCHEMA)
            if form is not None:
                request["response_format"] = form
            start = time.perf_counter()
            completion = completion_of(client.chat.completions.create(**request), start)
            sent.received += 1
            return completion.text, completion.latency_s

        self.structured_probe = probe(ask, _refuses_format)
        self.structured_mode = self.structured_probe.chosen
        log.info("%s: structured output as %s (%s)", self.name, self.structured_mode, self.structured_probe.why)

    def _refused(self, mode: str, error: Exception) -> None:
        """The server refused ``mode``: step down to the next form (once per form, whoever noticed first)."""
        if self.structured_mode == mode:
            self.structured_mode = STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]
            log.warning("%s refused response_format %s (%s); using %s", self.name, mode, str(error)[:80],
                        self.structured_mode)

    def _tools_refused(self, error: Exception) -> None:
        if self.tools_mode == "api":
            self.tools_mode = "prompt"
            log.warning("%s refused the tools API (%s); the tools are offered in the prompt only", self.name,
                        str(error)[:80])

    def _abandoned(self, purpose: str, delay: float | None) -> float | None:
        """A request given up on at the client's timeout: a local server goes on generating it, so a
        retry sent at once would queue behind it (a runaway answer cost a run 10-20 minutes that
        way). Wait as long as the timeout (the server's generation is bounded by the purpose's
        ``max_tokens``), count it, and say so once."""
        self.usage.count(purpose, "abandoned")
        if not self._said_abandoned:
            self._said_abandoned = True
            log.warning("%s gave up on an answer after %.0f s while the server kept generating it; each retry "
                        "now waits that long first (a slow server wants a longer --timeout)", self.name, self.timeout)
        return None if delay is None else max(delay, self.timeout)

    def _generate(self, messages: list[Message], purpose: str, params: SamplingParams) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: SamplingParams) -> list[Completion]:
        """A batch is issued concurrently (asyncio, at most ``concurrency`` requests in flight), so a
        serving engine such as vLLM can batch it; answers come back in order.

        Each call is sent at most ``attempts`` times. If some fail for good the others' answers are
        kept: :class:`CallsFailedError` (or :class:`EndpointFailingError`, once the breaker is open)
        carries every call's outcome, so no answer had is thrown away and no call is asked again.
        """
        if self.breaker.open:  # nothing is sent; a cache in front still answers what it holds
            raise EndpointFailingError(self.breaker.reason or "", partial=[Failure(0, "not sent")] * len(calls))
        self._probe_once(calls)
        outcomes = run_coroutine(self._abatch(calls, params))
        failures = [o for o in outcomes if isinstance(o, Failure)]
        if self.breaker.open:
            raise EndpointFailingError(self.breaker.reason or "", partial=outcomes)
        if failures:
            raise CallsFailedError(f"{self.name}: {len(failures)} of {len(calls)} calls failed "
                                   f"({failures[0].error})", partial=outcomes)
        return [o for o in outcomes if isinstance(o, Completion)]

    async def _abatch(self, calls: list[Call], params: SamplingParams) -> list[Outcome]:
        client = _client(*self._settings, asynchronous=True)
        limit = asyncio.Semaphore(self.concurrency)

        async def one(index: int, purpose: str, messages: list[Message]) -> Outcome:
            what, sent, failures = f"{self.name} ({purpose})", 0, 0
            async with limit:
                while True:
                    if self.breaker.open:
                        return Failure(sent, self.breaker.reason or "")
                    start, mode = time.perf_counter(), self.structured_mode
                    sent += 1
                    request = self._request(purpose, messages, params)
                    try:
                        with REQUESTS_IN_FLIGHT:
                            response = await client.chat.completions.create(**request)
                        completion = completion_of(response, start)
                    except Exception as error:  # every failure becomes a counted outcome
                        # A 4xx refusal of the form (or of the tools) says nothing of the endpoint: asked again at once
                        # in the next form. A server error naming the form may be the form or the server: the next
                        # form is tried as a retry of the failure, so the call costs no more than its attempts.
                        if "tools" in request and _refuses_tools(error):
                            self._tools_refused(error)  # asked again with the tools in the prompt only
                            if not _server_error(error):
                                continue
                        elif _refuses_format(error) and mode != "plain":
                            self._refused(mode, error)
                            if not _server_error(error):
                                continue
                        delay = None if isinstance(error, MemstreamError) else wait_before_retry(
                            error, failures, self.attempts, self.backoff_s)
                        if _abandoned(error):  # the server is still generating the answer given up on
                            delay = self._abandoned(purpose, delay)
                        failures += 1
                        if delay is None:
                            self.breaker.failed(describe(error))
                            log.warning("%s failed after %d request(s): %s", what, sent, describe(error))
                            return Failure(sent, f"{what} failed: {describe(error)}")
                        log.warning("%s: %s; attempt %d/%d in %.2fs", what, type(error).__name__, failures + 1,
                                    self.attempts, delay)
                        await asyncio.sleep(delay)
                        continue
                    self.breaker.succeeded()
                    completion.attempts = sent
                    if self.on_answer is not None:
                        self.on_answer(index, completion)
                    return completion

        order = issue_order(calls)  # a stage's prompts one after another: a one-slot prefix cache reuses them
        try:
            outcomes = await asyncio.gather(*(one(i, *calls[i]) for i in order))
        finally:
            await client.close()
        in_order: list[Outcome] = [Failure(0, "not sent")] * len(calls)
        for i, outcome in zip(order, outcomes, strict=True):
            in_order[i] = outcome
        return in_order


class OpenAIEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible endpoint. ``dim`` is learned from the first call."""

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key: str | None = None,
        timeout: float | None = None, attempts: int | None = None, backoff_s: float = 0.5, batch_size: int = 256,
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.attempts = endpoint.attempts_setting(attempts)
        self.backoff_s = backoff_s
        self.batch_size = batch_size
        timeout = setting(timeout, "MEMSTREAM_TIMEOUT", DEFAULT_TIMEOUT_S, "the timeout in seconds (--timeout)")
        self._client = _client(base_url, api_key, timeout)
        self.dim = int(self._embed(["dimension probe"]).shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            response = with_attempts(
                partial(self._client.embeddings.create, model=self.model, input=chunk),
                attempts=self.attempts, backoff_s=self.backoff_s, what=f"{self.name} (embedding)",
            )
            rows.extend(vectors_of(response, len(chunk), self.name))
        return np.asarray(rows, dtype=np.float32)


def vectors_of(response: Any, expected: int, name: str) -> list[list[float]]:
    """The vectors of an embeddings response, in input order; one clear error if it holds no usable ones."""
    data = field(response, "data")
    items = data if isinstance(data, list) else []
    try:
        ordered = sorted(items, key=lambda d: int(field(d, "index") or 0))
        rows = [[float(x) for x in field(d, "embedding")] for d in ordered]
    except (TypeError, ValueError):
        rows = []
    width = {len(r) for r in rows}
    if len(rows) != expected or len(width) != 1 or not all(math.isfinite(x) for r in rows for x in r):
        raise MemstreamError(f"{name} answered {expected} texts with {len(rows)} unusable or missing vectors; "
                             "check the embedding endpoint")
    return rows
