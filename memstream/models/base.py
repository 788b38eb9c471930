"""The two model interfaces memstream needs, in one place: a chat model and an embedder.

Every back-end (offline, OpenAI-compatible, the record/replay cache) implements
one of these. Usage is counted per *purpose* (importance, reflection, planning,
dialogue, ...) because that is how a memory system's cost is read.
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TypedDict, Unpack

import numpy as np

from memstream.errors import CallsFailedError, EndpointFailingError

Message = dict[str, str]
"""An OpenAI-style chat message: ``{"role": "system"|"user"|"assistant", "content": ...}``."""

def one_line(text: str) -> str:
    """A text as one line of a prompt: whatever lines it holds joined by spaces, so a memory that
    contains "1. ..." or "- ..." lines cannot imitate the numbered or bulleted lines of a prompt."""
    return " ".join(text.split())


Call = tuple[str, list[Message]]
"""One question for a model: ``(purpose, messages)``."""


class SamplingParams(TypedDict, total=False):
    """How a call is sampled, sent as is in an endpoint's request body (and part of a cached call's key)."""

    temperature: float


class Traffic(TypedDict):
    """What ``metrics.json`` reports of the traffic (a dict: it is spread into the report as is)."""

    requests_sent: int
    answers_received: int
    answers_lost: int


class PrefixCacheShare(TypedDict):
    """What ``metrics.json`` reports of the server's prefix cache (a dict: it is dumped as is)."""

    all: float | None
    by_purpose: dict[str, float]

@dataclass
class Completion:
    """One answer from a chat model, with what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1  # requests sent for this answer (retries included); 0 if it came from a cache
    truncated: bool = False  # the model stopped at the answer's bound (finish_reason "length")
    #: Prompt tokens the server served from its prefix cache, when it says so (vLLM and OpenAI:
    #: ``usage.prompt_tokens_details.cached_tokens``; llama.cpp's server: ``timings.cache_n``);
    #: None when it does not.
    prefix_cached_tokens: int | None = None


class InFlight:
    """How many requests to a model are awaiting their answers, process-wide.

    A signal handler reads it: with nothing in flight a run finishes its step and checkpoints;
    with a slow model's answer in flight it abandons the call at once (``CallInterrupted``) rather
    than wait minutes for it.
    """

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def __enter__(self) -> InFlight:
        with self._lock:
            self._count += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._count -= 1

    @property
    def waiting(self) -> bool:
        return self._count > 0


#: The process's requests in flight (back-ends that wait on a server enter it around each request).
REQUESTS_IN_FLIGHT = InFlight()


@dataclass
class Failure:
    """A call that got no answer: how many requests were sent for it (0 if none could be) and why."""

    attempts: int
    error: str


#: What the partial results of a batch hold, per call: its answer, or why it has none.
Outcome = Completion | Failure


@dataclass
class PurposeUsage:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retried: int = 0   # first answer unreadable, asked again with the parse error
    implausible: int = 0  # ... of which a sense check refused (it parsed but made no sense; docs/sense-checks.md)
    unusable: int = 0  # unreadable twice: the answer was lost
    failed: int = 0    # the call failed for good (after the back-end's own retries)
    partial: int = 0   # short of the request twice; what it did give was kept, the rest filled in
    stretched: int = 0  # usable, but short of what was asked: the stage stretched it to fit (Request.remark)
    requests: int = 0  # requests sent to the model, every retry included (failed ones too)
    received: int = 0  # answers that came back from the model (not from the call cache)
    truncated: int = 0  # answers cut at their purpose's bound (models.bounds), read as damaged answers
    abandoned: int = 0  # requests the client gave up on at its timeout while the server went on generating
    prefix_cached_tokens: int = 0  # prompt tokens the server served from its prefix cache ...
    prefix_reported_tokens: int = 0  # ... out of the prompt tokens of answers whose server said so

    @property
    def prefix_cache_share(self) -> float | None:
        """The share of prompt tokens served from the server's prefix cache (None: never reported)."""
        if not self.prefix_reported_tokens:
            return None
        return round(self.prefix_cached_tokens / self.prefix_reported_tokens, 4)

    @property
    def lost(self) -> int:
        """Answers the stage did not get from the model (a fallback stood in)."""
        return self.unusable + self.failed


#: What :meth:`Usage.count` accepts: the ways an answer can go wrong.
PROBLEMS = ("retried", "implausible", "unusable", "failed", "partial", "abandoned", "stretched")


@dataclass
class Usage:
    """Counters of model calls, tokens, latency and lost answers, per purpose.

    ``rounds`` counts sequential waits on the model (one per batch that reached it): with a
    remote endpoint, rounds times its latency is the floor of a run's wall time.
    """

    by_purpose: dict[str, PurposeUsage] = field(default_factory=dict)
    rounds: int = 0

    def count(self, purpose: str, problem: str) -> None:
        """One answer that went wrong in the way ``problem`` (one of :data:`PROBLEMS`) names."""
        if problem not in PROBLEMS:
            raise ValueError(f"unknown problem {problem!r}; one of {PROBLEMS}")
        u = self.by_purpose.setdefault(purpose, PurposeUsage())
        setattr(u, problem, getattr(u, problem) + 1)

    @property
    def lost(self) -> int:
        return sum(u.lost for u in self.by_purpose.values())

    def record(self, purpose: str, completion: Completion) -> None:
        u = self.by_purpose.setdefault(purpose, PurposeUsage())
        u.calls += 1
        u.cache_hits += int(completion.cached)
        u.prompt_tokens += completion.prompt_tokens
        u.completion_tokens += completion.completion_tokens
        u.latency_s += completion.latency_s
        if not completion.cached:
            u.requests += completion.attempts
            u.received += 1
            u.truncated += int(completion.truncated)
            if completion.prefix_cached_tokens is not None:
                u.prefix_cached_tokens += min(completion.prefix_cached_tokens, completion.prompt_tokens)
                u.prefix_reported_tokens += completion.prompt_tokens

    def record_failure(self, purpose: str, failure: Failure) -> None:
        """A call that got no answer still cost the requests sent for it."""
        self.by_purpose.setdefault(purpose, PurposeUsage()).requests += failure.attempts

    def totals(self) -> Traffic:
        """What ``metrics.json`` reports of the traffic: requests sent (retries included), answers
        received, answers lost (failed for good or unusable twice)."""
        return {"requests_sent": sum(u.requests for u in self.by_purpose.values()),
                "answers_received": sum(u.received for u in self.by_purpose.values()),
                "answers_lost": self.lost}

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.by_purpose.values())

    def prefix_cache_share(self) -> PrefixCacheShare:
        """The share of prompt tokens the server served from its prefix cache: over all answers and per
        purpose, counting only answers whose server reported it (None where none did)."""
        cached = sum(u.prefix_cached_tokens for u in self.by_purpose.values())
        reported = sum(u.prefix_reported_tokens for u in self.by_purpose.values())
        return {"all": round(cached / reported, 4) if reported else None,
                "by_purpose": {p: u.prefix_cache_share for p, u in sorted(self.by_purpose.items())
                               if u.prefix_cache_share is not None}}

    def as_dict(self) -> dict[str, dict[str, int | float]]:
        return {p: asdict(u) for p, u in sorted(self.by_purpose.items())}

    def by_stage(self) -> dict[str, PurposeUsage]:
        """Totals per stage: ``reflection.questions`` and ``reflection.insights`` count as ``reflection``."""
        out: dict[str, PurposeUsage] = {}
        for purpose, u in self.by_purpose.items():
            total = out.setdefault(purpose.split(".")[0], PurposeUsage())
            for f in fields(PurposeUsage):
                setattr(total, f.name, getattr(total, f.name) + getattr(u, f.name))
        return out


def count_tokens(text: str) -> int:
    """An approximate token count: words and punctuation, by a regular expression, in no model's vocabulary.

    Context budgets, cuts and the token costs of back-ends that report none are counted with it. On LoCoMo and
    LongMemEval turns it says about 6% fewer than the bundled MiniLM WordPiece tokenizer (median 3.5% a turn;
    ``benchmarks/token_counts.py``); a chat model's own tokenizer differs again, so read it as approximate.
    """
    return len(re.findall(r"\w+|[^\w\s]", text))


class ChatModel(ABC):
    """Messages in, text out. Subclasses implement :meth:`_generate`.

    ``purpose`` says what a call is for; it feeds the usage counters and lets the
    offline stand-in model know which of memstream's prompts it is answering. Stages do
    not call these methods themselves: they yield :class:`~memstream.models.request.Request`
    objects, and a runner answers them (see ``memstream.models.request``).
    """

    name: str = "chat"
    #: The sampling seed a run gives its model (its ``--seed``), or None: an endpoint is sent it where it takes one
    #: (a sample at temperature 0 does not depend on it); the offline stand-in breaks ties among equals with it.
    seed: int | None = None

    def __init__(self) -> None:
        self.usage = Usage()
        #: Called with (index in the batch, completion) as each answer arrives, by back-ends that
        #: answer a batch piece by piece; a call cache sets it to keep each answer at once.
        self.on_answer: Callable[[int, Completion], None] | None = None

    @property
    def failing(self) -> str | None:
        """Why the model stopped asking its endpoint (its circuit breaker opened), or None while it asks."""
        return None

    @abstractmethod
    def _generate(self, messages: list[Message], purpose: str, params: SamplingParams) -> Completion:
        """Answer one conversation."""

    def _generate_many(self, calls: list[Call], params: SamplingParams) -> list[Completion]:
        """Answer many conversations, of any purposes; back-ends that can run them concurrently override this."""
        return [self._generate(messages, purpose, params) for purpose, messages in calls]

    def complete(self, messages: list[Message], *, purpose: str = "other", **params: Unpack[SamplingParams]) -> str:
        return self.complete_many([(purpose, messages)], **params)[0]

    def complete_many(self, calls: Sequence[Call], **params: Unpack[SamplingParams]) -> list[str]:
        """Answer ``(purpose, messages)`` calls as one batch: one wait on the model, however many purposes."""
        if not calls:
            return []
        start = time.perf_counter()
        try:
            completions: list[Outcome] = list(self._generate_many(list(calls), params))
        except (CallsFailedError, EndpointFailingError) as error:
            if len(error.partial) != len(calls):
                raise
            self._tally(calls, error.partial, start)
            error.texts = [c.text if isinstance(c, Completion) else None for c in error.partial]
            raise
        self._tally(calls, completions, start)
        return [c.text for c in completions if isinstance(c, Completion)]

    def _tally(self, calls: Sequence[Call], outcomes: list[Outcome], start: float) -> None:
        """Count a batch's answers (and, for a partial batch, the requests its failed calls cost)."""
        elapsed = time.perf_counter() - start
        for (purpose, _), c in zip(calls, outcomes, strict=True):
            if isinstance(c, Failure):
                self.usage.record_failure(purpose, c)
                continue
            if not c.latency_s and not c.cached:
                c.latency_s = elapsed / len(outcomes)
            self.usage.record(purpose, c)
        if any(isinstance(c, Completion) and not c.cached for c in outcomes):
            self.usage.rounds += 1


#: Words per embedding window: MiniLM reads 256 word pieces, about 190 English words. A longer
#: memory is embedded window by window and found by its best window, never by a truncated prefix.
WINDOW_WORDS = 150


def windows(text: str, size: int = WINDOW_WORDS) -> list[str]:
    """Split ``text`` into consecutive windows of at most ``size`` words (all of it, in order)."""
    words = text.split()
    if len(words) <= size:
        return [text]
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


class Embedder(ABC):
    """Texts in, an ``(n, dim)`` float32 matrix of L2-normalised rows out."""

    name: str = "embedder"
    dim: int = 0

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Raw vectors for ``texts``; :meth:`embed` normalises them."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.ascontiguousarray(self._embed(texts), dtype=np.float32)
        return l2_normalise(vectors)


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)
