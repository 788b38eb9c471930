"""How the offline stand-in model rates importance: generic features of a statement, not a model.

Rules, not intelligence. Registered with :mod:`memstream.models.offline` when ``memstream.stream``
is imported. A rating is built from, in turn:

1. **What kind of happening it is**: the highest tier of a short list of life events and routines
   whose words it holds, as whole words (or a stem written with ``*``: "pregnan*"), so that
   "select" is not "elect" and "fireplace" is not "fire". The tiers follow the paper's anchors:
   brushing teeth is 1, a death or an engagement 9; a statement that holds none is 2.
2. **Whether it is an event with a clock time and a place** (:func:`memstream.offline_events.commitment`,
   ``clock_only``: a time said in words or a correction is not weighed here):
   something one can go to is at least notable (6, the prompt's "an invitation") and one above
   the tier its words give, so an announced party outranks talk of one.
3. **The weight of news** (:func:`weight_cues`): one more for each kind of generic cue it holds,
   at most ``MAX_CUES``: who is affected (many people: "everyone", "the whole street", "all the
   neighbours"), a change to a shared place (closing, opening, moving, shutting), money, health,
   a promise, a date (a weekday, a month, "next week"). So a rumour that a local shop is closing
   outweighs a sighting of someone reading, and talk of the weather does not.
4. **Who it concerns**: a statement about people (a name, a pronoun or a relation: "my
   daughter"; a capitalised place name counts too, the rules cannot tell them apart) keeps its
   rating; one about things only (a stove, a bed) is held to the routine tier unless its words are
   an emergency (8+: a fire).

Novelty to a listener and how recently a thing was heard are not the statement's own: the
conversation rules weigh them when choosing what to pass on (:mod:`memstream.sim.talk.offline`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from memstream.models import Message, register_rules
from memstream.offline_events import commitment
from memstream.offline_text import names
from memstream.stream.prompts import IMPORTANCE_PURPOSE, ROUND_PURPOSE, memory_text_of, round_texts_of

#: Importance lexicon: the highest matching tier wins. Whole words; a trailing ``*`` is a stem.
_IMPORTANCE_TIERS: list[tuple[int, tuple[str, ...]]] = [
    (9, ("died", "death", "funeral", "passed away", "married", "wedding", "divorce*", "born", "pregnan*",
         "engaged", "engagement", "proposed", "break up", "broke up", "breakup", "accepted into", "acceptance",
         "cancer", "diagnos*", "accident", "fired", "laid off", "arrested")),
    (8, ("hospital*", "emergency", "fire", "on fire", "graduat*", "promot*", "new job", "hired", "election",
         "elected", "quit", "moved to", "moving to", "lost my", "stolen", "robbed", "injur*")),
    (7, ("party", "parties", "invit*", "date with", "in love", "crush", "argument", "fight", "apolog*",
         "secret", "surprise", "award", "won", "exam*", "interview*", "deadline", "news")),
    (5, ("rumour*", "rumor*", "gossip", "denied", "denies", "turns out", "not true", "untrue", "after all",
         "no longer", "called off", "cancel*", "friend*", "meet*", "met", "talk*", "conversation*", "plan*",
         "project*", "class*", "lecture*",
         "research*", "paint*", "music", "book*", "trip*", "travel*", "birthday", "worried", "excited",
         "happy", "sad", "angry", "help*")),
    (3, ("work*", "study*", "studies", "shop*", "cook*", "coffee", "lunch", "dinner", "cafe", "walk*",
         "read*", "write*", "writing", "email*", "call*")),
    (1, ("brush*", "teeth", "making bed", "make the bed", "made the bed", "idle", "sleeping", "asleep",
         "is off", "is on", "shower*", "wash*", "toilet", "nothing")),
]


@dataclass(frozen=True)
class _Tier:
    """One tier's cues, split for speed (every observation is rated): whole words, stems, phrases."""

    value: int
    words: frozenset[str]
    stems: tuple[str, ...]
    phrases: tuple[str, ...]

    def holds(self, words: list[str], joined: str) -> bool:
        return (not self.words.isdisjoint(words) or any(w.startswith(self.stems) for w in words)
                or any(f" {p} " in joined for p in self.phrases))


_TIERS = [_Tier(value, frozenset(c for c in cues if " " not in c and not c.endswith("*")),
                tuple(c[:-1] for c in cues if c.endswith("*")), tuple(c for c in cues if " " in c))
          for value, cues in _IMPORTANCE_TIERS]
_WORDS = re.compile(r"[a-z0-9']+")
#: What the routine tier is; an emergency is what the rules drop everything for.
ROUTINE, NOTABLE, EMERGENCY = 2, 6, 8
_PERSON = re.compile(r"\b(?:I|me|my|he|she|him|her|his|they|them|their|we|"
                     r"our|you|your|mother|father|mom|dad|daughter|son|wife|husband|sister|brother|friend|"
                     r"family|neighbou?r|partner|boyfriend|girlfriend|child|children|baby|everyone)\b")


#: The kinds of cue that make news weigh more, each a list of whole words, ``*`` stems or phrases (as the tiers).
WEIGHT_CUES: dict[str, tuple[str, ...]] = {
    "many affected": ("everyone", "everybody", "whole street", "whole town", "whole village", "all the neighbours",
                      "all the neighbors", "the neighbours", "the neighbors", "residents", "customers", "community",
                      "the public", "regulars"),
    "shared place changes": ("closing", "closes", "closed down", "close down", "shut*", "opening", "reopen*",
                             "moving", "relocat*", "renovat*", "demolish*", "for sale", "sold", "bankrupt*"),
    "money": ("money", "rent", "price*", "cost*", "pay", "pays", "paid", "debt*", "tax", "taxes", "fee*", "dollar*",
              "pound*", "euro*", "wage*", "salary", "expensive", "cheap*", "loan*"),
    "health": ("sick", "ill", "illness", "flu", "fever", "doctor*", "clinic", "surgery", "medicine", "disease*",
               "virus", "outbreak", "health*", "injured"),
    "a promise": ("promis*", "swore", "vow*", "pledg*", "guarantee*"),
    "a date": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
               "march", "april", "june", "july", "august", "september", "october", "november", "december",
               "tomorrow", "next week", "next month", "weekend"),
}
#: Cue kinds counted at most: a statement full of cues is news, not an emergency.
MAX_CUES = 2
_CUES = {kind: _Tier(0, frozenset(c for c in cues if " " not in c and not c.endswith("*")),
                     tuple(c[:-1] for c in cues if c.endswith("*")), tuple(c for c in cues if " " in c))
         for kind, cues in WEIGHT_CUES.items()}


def weight_cues(text: str) -> list[str]:
    """The kinds of :data:`WEIGHT_CUES` ``text`` holds (whole words, as the tiers), in their order."""
    words = _WORDS.findall(text.lower())
    joined = f" {' '.join(words)} "
    return [kind for kind, cues in _CUES.items() if cues.holds(words, joined)]


def lexicon_tier(text: str) -> int | None:
    """The highest tier whose words ``text`` holds (whole words), or None."""
    words = _WORDS.findall(text.lower())
    joined = f" {' '.join(words)} "
    return next((tier.value for tier in _TIERS if tier.holds(words, joined)), None)


def rate_poignancy(text: str) -> int:
    """The offline importance rule (see the module's doc): the words' tier, raised by the weight of news
    (its cue kinds, at most MAX_CUES, never past an emergency) and for an event with a time and a place,
    held to the routine tier for a statement about things only."""
    tier = lexicon_tier(text)
    rating = ROUTINE if tier is None else tier
    event = commitment(text, clock_only=True) is not None  # clock times only: ratings stay as they were
    cues = len([kind for kind in weight_cues(text) if not (event and kind == "a date")])  # an event's date is its own
    if cues and rating < EMERGENCY:
        rating = min(EMERGENCY, rating + min(MAX_CUES, cues))
    if event:
        rating = min(10, max(NOTABLE, rating + 1))
    if not (_PERSON.search(text) or names(text)) and rating < EMERGENCY:
        rating = min(rating, ROUTINE if tier is None or tier > ROUTINE else tier)
    return rating


def answer_importance(messages: list[Message]) -> str:
    return str(rate_poignancy(memory_text_of(messages)))


def answer_round(messages: list[Message]) -> str:
    return json.dumps({"ratings": [rate_poignancy(text) for text in round_texts_of(messages)]})


register_rules({IMPORTANCE_PURPOSE: answer_importance, ROUND_PURPOSE: answer_round})
