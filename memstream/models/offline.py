"""The offline chat model: a deterministic, rule-based stand-in. It is not an LLM.

It answers each prompt by the rule registered for the call's ``purpose``, so that
every stage runs end to end with no key and no network and the tests are
deterministic. It knows no domain itself: the rules live beside the prompts they
answer (``memstream/{stream,reflection,planning,sim}/offline.py``) and register
here when their package is imported. A purpose with no rule gets an honest
non-answer. The answers are plausible, not intelligent.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from contextvars import ContextVar

from memstream.models.base import ChatModel, Completion, Message, SamplingParams, count_tokens

Handler = Callable[[list[Message]], str]

RULES: dict[str, Handler] = {}
"""Purpose -> rule: filled by the domain packages (``stream``, ``reflection``, ``planning``, ``sim``)."""


def register_rules(rules: dict[str, Handler]) -> None:
    """Teach the stand-in how to answer the prompts of a stage, keyed by purpose.

    Each package that owns prompts registers its own rules when it is imported, so this
    module knows no domain: a purpose is answered once the package that asks it exists.
    """
    RULES.update(rules)


#: The seed of the stand-in answering now (set while a rule runs, for :func:`tie_breaker`).
_SEED: ContextVar[int] = ContextVar("offline_seed", default=0)


def tie_breaker(prompt: str) -> random.Random:
    """A random source for a rule that chooses among equals (which of several equally important things to
    say): drawn from the answering model's seed and the prompt, so a run's ``--seed`` decides every such
    choice, the same seed and prompt give the same answer (a call cache may replay it), and another seed
    another answer."""
    return random.Random(f"{_SEED.get()}\n{prompt}")


def prompt_of(messages: list[Message]) -> str:
    """The prompt a rule answers: the first user message (a system message or a retry may surround it)."""
    return next((m["content"] for m in messages if m.get("role") == "user"), "")


def _echo(messages: list[Message]) -> str:
    """Fallback for prompts with no rule: a short, honest non-answer."""
    last = messages[-1]["content"] if messages else ""
    words = re.findall(r"\w+", last)
    return "(offline model) " + " ".join(words[:12])


#: Bump when any offline rule changes: the call cache keys on the model's name, so a new
#: version never replays answers the old rules gave.
#: 10: a visit's news told first; 9: weight of news, news at a percentile of what one recalls, insights from one line
RULES_VERSION = 10


class OfflineChatModel(ChatModel):
    """Deterministic rule-based answers to memstream's prompts, keyed by purpose."""

    name = f"offline/rules-{RULES_VERSION}"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.seed = seed  # the run's: rules draw their choices among equals from it (tie_breaker)
        self.handlers: dict[str, Handler] = {}  # this instance's own rules, ahead of the registry

    def register(self, purpose: str, handler: Handler) -> None:
        """Teach this stand-in (only) how to answer a prompt."""
        self.handlers[purpose] = handler

    def _generate(self, messages: list[Message], purpose: str, params: SamplingParams) -> Completion:
        rule = self.handlers.get(purpose) or RULES.get(purpose, _echo)
        token = _SEED.set(self.seed or 0)
        try:
            text = rule(messages)
        finally:
            _SEED.reset(token)
        prompt = sum(count_tokens(m["content"]) for m in messages)
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=count_tokens(text))
