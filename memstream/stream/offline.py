"""How the offline stand-in model rates importance: a lexicon of life events and routines.

Rules, not intelligence. Registered with :mod:`memstream.models.offline` when
``memstream.stream`` is imported.
"""

from __future__ import annotations

from memstream.models import Message, register_rules
from memstream.stream.prompts import IMPORTANCE_PURPOSE, memory_text_of

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


def answer_importance(messages: list[Message]) -> str:
    return str(rate_poignancy(memory_text_of(messages)))


register_rules({IMPORTANCE_PURPOSE: answer_importance})
