"""How long an answer may be: a bound per purpose on the tokens a model may generate, and on the
arrays and strings of a schema a server constrains its decoding to.

Without a bound a small model under grammar-constrained decoding can fail to close its JSON and
generate to the end of its context (minutes on a laptop), and the client's retry then queues
behind the generation the server is still running. Each package registers its purposes' bounds
beside their prompts, from the shape of the answer (a rating needs a few tokens, a day's hour
blocks a few hundred); ``MEMSTREAM_MAX_TOKENS`` overrides them (``N`` for every purpose, or
``purpose=N,purpose=N``). An answer cut at its bound is read like any damaged answer (salvaged
where it can be) and counted as ``truncated`` for its purpose.
"""

from __future__ import annotations

from typing import Any

from memstream.errors import MemstreamError
from memstream.models.env import env_text, is_whole

#: Tokens an answer may take when its purpose registered no bound.
DEFAULT_ANSWER_TOKENS = 512
#: A schema's arrays and strings without a bound of their own get these (24: the hours of a day,
#: the longest list any stage asks for; 400 characters: far past any field a stage reads).
DEFAULT_MAX_ITEMS, DEFAULT_MAX_CHARS = 24, 400

ANSWER_TOKENS: dict[str, int] = {}
"""Purpose -> the most tokens its answer may take, registered by the package that owns the prompt."""


def register_answer_tokens(bounds: dict[str, int]) -> None:
    """Register the most tokens each purpose's answer may take (``max_tokens`` sent with its requests)."""
    for purpose, tokens in bounds.items():
        if tokens <= 0:
            raise ValueError(f"the answer bound of {purpose} must be positive")
        ANSWER_TOKENS[purpose] = tokens


def answer_tokens(purpose: str) -> int:
    """The bound on ``purpose``'s answer: ``MEMSTREAM_MAX_TOKENS`` if it names one, else the registered one."""
    override = _overrides().get(purpose, _overrides().get("*"))
    return override or ANSWER_TOKENS.get(purpose, DEFAULT_ANSWER_TOKENS)


def _overrides() -> dict[str, int]:
    raw = env_text("MEMSTREAM_MAX_TOKENS")
    if not raw:
        return {}
    out: dict[str, int] = {}
    for part in raw.split(","):
        purpose, _, value = part.rpartition("=")
        value = value.strip()
        if not is_whole(value) or int(value) <= 0:
            raise MemstreamError(f"MEMSTREAM_MAX_TOKENS={raw!r}: write N or purpose=N,purpose=N with N a positive "
                                 "whole number of tokens")
        out[purpose.strip() or "*"] = int(value)
    return out


def bounded_schema(schema: Any) -> Any:
    """``schema`` with every array given a ``maxItems`` and every string a ``maxLength`` where it has
    none, so a grammar built from it cannot run away (a copy; ``$defs`` included)."""
    if isinstance(schema, list):
        return [bounded_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded_schema(v) for k, v in schema.items()}
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "array" in kinds:
        out.setdefault("maxItems", DEFAULT_MAX_ITEMS)
    if "string" in kinds and "enum" not in out and "const" not in out:
        out.setdefault("maxLength", DEFAULT_MAX_CHARS)
    return out
