"""The offline chat model: a deterministic, rule-based stand-in. It is not an LLM.

It answers each of memstream's prompts (recognised by the call's ``purpose``)
with simple rules, so that every stage runs end to end with no key and no
network and the tests are deterministic. Its answers are plausible, not
intelligent: importance comes from a lexicon of life events and routines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memstream.models.base import ChatModel, Completion, Message, count_tokens

Handler = Callable[[list[Message]], str]

# Importance lexicon: the highest matching tier wins. Tier values follow the
# paper's anchors: brushing teeth and making the bed are 1, a break-up or a
# college acceptance is 10.
_IMPORTANCE_TIERS: list[tuple[int, tuple[str, ...]]] = [
    (9, ("died", "death", "funeral", "passed away", "married", "wedding", "divorce", "born",
         "pregnan", "engaged", "proposed", "break up", "broke up", "breakup", "accepted into",
         "acceptance", "cancer", "diagnos", "accident", "fired", "laid off", "arrested")),
    (8, ("hospital", "emergency", "fire ", "on fire", "graduat", "promot", "new job", "hired",
         "elect", "quit", "moved to", "moving to", "lost my", "stolen", "robbed", "injur")),
    (7, ("party", "invit", "date with", "in love", "crush", "argument", "fight", "apolog",
         "secret", "surprise", "award", "won ", "exam", "interview", "deadline", "news")),
    (5, ("friend", "meet", "met ", "talk", "conversation", "plan", "project", "class",
         "lecture", "research", "paint", "music", "book", "trip", "travel", "birthday",
         "worried", "excited", "happy", "sad", "angry", "help")),
    (3, ("work", "study", "shop", "cook", "coffee", "lunch", "dinner", "cafe", "walk",
         "read", "write", "email", "call")),
    (1, ("brush", "teeth", "making bed", "make the bed", "made the bed", "idle", "sleeping",
         "asleep", "is off", "is on", "shower", "wash", "toilet", "nothing")),
]


def rate_poignancy(text: str) -> int:
    """The offline importance rule: the highest lexicon tier that the text matches, else 2."""
    lowered = f" {text.lower()} "
    for value, cues in _IMPORTANCE_TIERS:
        if any(cue in lowered for cue in cues):
            return value
    return 2


def _importance(messages: list[Message]) -> str:
    from memstream.stream.prompts import memory_text_of

    return str(rate_poignancy(memory_text_of(messages)))


def _echo(messages: list[Message]) -> str:
    """Fallback for prompts with no rule: a short, honest non-answer."""
    last = messages[-1]["content"] if messages else ""
    words = re.findall(r"\w+", last)
    return "(offline model) " + " ".join(words[:12])


#: Bump when any offline rule changes: the call cache keys on the model's name, so a new
#: version never replays answers the old rules gave.
RULES_VERSION = 2


class OfflineChatModel(ChatModel):
    """Deterministic rule-based answers to memstream's prompts, keyed by purpose."""

    name = f"offline/rules-{RULES_VERSION}"

    def __init__(self) -> None:
        super().__init__()
        from memstream.planning.offline import HANDLERS as planning
        from memstream.reflection.offline import HANDLERS as reflection
        from memstream.sim.offline import HANDLERS as sim

        self.handlers: dict[str, Handler] = {"importance": _importance, **reflection, **planning, **sim}

    def register(self, purpose: str, handler: Handler) -> None:
        """Teach the stand-in how to answer a new stage's prompt."""
        self.handlers[purpose] = handler

    def _generate(self, messages: list[Message], purpose: str, params: dict[str, Any]) -> Completion:
        text = self.handlers.get(purpose, _echo)(messages)
        prompt = sum(count_tokens(m["content"]) for m in messages)
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=count_tokens(text))
