"""Model back-ends, chosen by a short spec string.

Chat: ``offline`` (default; the rule-based stand-in) or ``openai:MODEL``.
Embedders: ``minilm`` (default), ``wordllama``, ``hash``/``hash:DIM`` or ``openai:MODEL``.
The environment variables MEMSTREAM_LLM and MEMSTREAM_EMBEDDER set the defaults.
"""

from __future__ import annotations

import os

from memstream.errors import MemstreamError
from memstream.models.base import (
    REQUESTS_IN_FLIGHT,
    Call,
    ChatModel,
    Completion,
    Embedder,
    Message,
    PrefixCacheShare,
    PurposeUsage,
    SamplingParams,
    Traffic,
    Usage,
    count_tokens,
    one_line,
    windows,
)
from memstream.models.bounds import ANSWER_TOKENS, answer_tokens, register_answer_tokens
from memstream.models.cache import CachedChatModel, CachedEmbedder, forget_in_cache
from memstream.models.embedders import HashEmbedder, MiniLMEmbedder, WordLlamaEmbedder
from memstream.models.layout import laid_out
from memstream.models.offline import OfflineChatModel, prompt_of, register_rules, tie_breaker
from memstream.models.openai_backend import run_coroutine
from memstream.models.parsing import (
    ANSWER_TOOLS,
    Citations,
    items_of,
    json_values,
    maybe_structured,
    out_of_character,
    parse_structured,
    parse_yes_no,
    register_answer_schema,
    register_answer_tools,
)
from memstream.models.probe import ProbeReport
from memstream.models.request import Request, Stage, answer_all, concurrently, run_direct

DEFAULT_LLM = "offline"
#: MiniLM recalls more on LoCoMo (recall_any@10 0.557 vs 0.449 for WordLlama, relevance
#: alone; benchmarks/embedders.py); WordLlama is ~65x faster. See the README.
DEFAULT_EMBEDDER = "minilm"
EMBEDDER_NAMES = ("wordllama", "minilm", "hash", "hash:DIM", "openai:MODEL")


def make_chat_model(spec: str | None = None, *, timeout: float | None = None,
                    concurrency: int | None = None, seed: int | None = None) -> ChatModel:
    """A chat model from its spec; ``timeout`` (seconds per answer) and ``concurrency`` (requests in
    flight) apply to an endpoint, else MEMSTREAM_TIMEOUT and MEMSTREAM_CONCURRENCY, else 60 and 8;
    ``seed`` (a run's) is the endpoint's sampling seed and the offline rules' choice among equals."""
    spec = check_llm(spec or os.environ.get("MEMSTREAM_LLM") or DEFAULT_LLM)
    if spec == "offline":
        return OfflineChatModel(seed or 0)
    from memstream.models.openai_backend import OpenAIChat

    return OpenAIChat(spec.removeprefix("openai:"), timeout=timeout, concurrency=concurrency, seed=seed)


def check_llm(spec: str) -> str:
    """``spec`` if it names a chat model, else one line saying what does: checked before anything is made
    for it (a run folder), and by :func:`make_chat_model` itself."""
    if spec == "offline" or (spec.startswith("openai:") and len(spec) > len("openai:")):
        return spec
    raise MemstreamError(f"unknown chat model {spec!r}; use 'offline' or 'openai:MODEL'")


def check_embedder(spec: str) -> str:
    """``spec`` if it names an embedder, else one line saying which do (as :func:`check_llm`)."""
    if spec in ("wordllama", WordLlamaEmbedder.name, "minilm", MiniLMEmbedder.name):
        return spec
    if spec == "hash" or spec.startswith("hash:") or spec.startswith("hash-"):
        dim = spec[5:] or "256"
        if not (dim.isascii() and dim.isdigit()) or int(dim) <= 0:
            raise MemstreamError(f"bad hash embedder {spec!r}; write hash or hash:DIM, e.g. hash:256")
        return spec
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return spec
    raise MemstreamError(f"unknown embedder {spec!r}; use one of {', '.join(EMBEDDER_NAMES)}")


def make_embedder(spec: str | None = None) -> Embedder:
    """The embedder a spec names (``minilm``, ``wordllama``, ``hash``, ``openai:MODEL``), else
    ``MEMSTREAM_EMBEDDER``, else the offline default.
    """
    spec = check_embedder(spec or os.environ.get("MEMSTREAM_EMBEDDER") or DEFAULT_EMBEDDER)
    if spec in ("wordllama", WordLlamaEmbedder.name):
        return WordLlamaEmbedder()
    if spec in ("minilm", MiniLMEmbedder.name):
        return MiniLMEmbedder()
    if spec.startswith("hash"):
        return HashEmbedder(int(spec[5:] or "256"))
    from memstream.models.openai_backend import OpenAIEmbedder

    return OpenAIEmbedder(spec.removeprefix("openai:"))


__all__ = [
    "ANSWER_TOKENS", "ANSWER_TOOLS", "CachedChatModel", "CachedEmbedder", "Call", "ChatModel", "Citations",
    "Completion", "Embedder", "HashEmbedder", "Message", "MiniLMEmbedder", "OfflineChatModel", "PrefixCacheShare",
    "ProbeReport", "PurposeUsage", "REQUESTS_IN_FLIGHT", "Request", "SamplingParams", "Stage", "Traffic", "Usage",
    "WordLlamaEmbedder", "answer_all", "answer_tokens", "check_embedder", "check_llm", "concurrently", "count_tokens",
    "forget_in_cache", "items_of", "json_values", "laid_out", "make_chat_model", "make_embedder", "maybe_structured",
    "one_line", "out_of_character", "parse_structured", "parse_yes_no", "prompt_of", "register_answer_schema",
    "register_answer_tokens", "register_answer_tools", "register_rules", "run_coroutine", "run_direct", "tie_breaker",
    "windows",
]
