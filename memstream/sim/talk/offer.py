"""What an agent considers when it might start a conversation: the hour, the other, and its news.

A small real model declined every offer when asked with the time and a few memories of the other
alone: nothing in the prompt said why one would talk. People talk when it is a sociable hour, with
someone they know (or have not met), and when they have something to tell. So the offer gives the
time of day as a word beside the clock, a line on how the two last talked (or that they have not),
and up to ``MAX_UNTOLD`` things of the agent's day the other has not heard from it. What was told
is read from what the agent said to the other (:class:`~memstream.sim.agents.agent.Talked`), by words:
generic rules, the same for every town.
"""

from __future__ import annotations

import re
from datetime import datetime

from memstream.models import Message
from memstream.offline_text import content_words, gerund
from memstream.sim.agents.agent import Agent, Talked
from memstream.sim.talk import prompts
from memstream.sim.talk.recent import day_began, recent_day
from memstream.stream import MemoryStream
from memstream.timeutil import from_epoch

#: Things the agent knows that the other does not, at most, in an offer.
MAX_UNTOLD = 3
#: Memories of the recent day looked at for them (the most important first).
UNTOLD_LOOK = 20
#: A memory counts as told when this share of its content words (its owner's own name aside) was said to the
#: other: people retell in their own words, so not every word comes back.
TOLD_SHARE = 0.6
#: Where each part of the day begins (hour), the last first; before the first, it is night.
PERIODS = ((21, "night"), (17, "evening"), (12, "afternoon"), (5, "morning"))


def period(now: datetime) -> str:
    """The part of the day ``now`` falls in: morning, afternoon, evening or night."""
    return next((word for hour, word in PERIODS if now.hour >= hour), "night")


def told(text: str, said: list[str], speaker: str) -> bool:
    """Whether ``text`` was said already: most of its content words are in ``said`` (the speaker's own name
    aside: one says "I", not one's name). A text with no content words has nothing to tell."""
    own = set(content_words(speaker))
    words = set(content_words(text)) - own
    if not words:
        return True
    heard = set(content_words(" ".join(said)))
    return len(words & heard) >= TOLD_SHARE * len(words)


def untold(stream: MemoryStream, a: Agent, other: str, now: datetime) -> list[str]:
    """Up to MAX_UNTOLD memories of ``a``'s day that ``other`` has not heard from it, most important first: not
    from a conversation with ``other`` (it was there), not about ``other`` (it knows its own doings), not a
    planning thought (a note to oneself; what it came from is told), not told to it in any conversation."""
    said = a.social.known.get(other, Talked()).said
    day = recent_day(stream, a.name, now, day_began(now, a.identity.wake), k=UNTOLD_LOOK)
    fresh = [m.text for m in day if m.metadata.get("with_") != other and not m.metadata.get("planning")
             and other not in m.text and not told(m.text, said, a.name)]
    return fresh[:MAX_UNTOLD]


def concerned(stream: MemoryStream, a: Agent, others: list[str], now: datetime) -> set[str]:
    """Those of ``others`` whom ``a``'s memories of the recent day name (by full name or first name), the
    conversations with them aside: whom its news concerns."""
    day = recent_day(stream, a.name, now, day_began(now, a.identity.wake), k=UNTOLD_LOOK)
    texts = [m.text for m in day if not m.metadata.get("with_")]
    return {o for o in others if any(o in t or re.search(rf"\b{re.escape(o.split()[0])}\b", t) for t in texts)}


def relationship(name: str, other: str, last: Talked | None, now: datetime) -> str:
    """What ``name`` knows of its talks with ``other``: that there were none, or when the last was and how it
    went (its memo, or how long it was)."""
    if last is None:
        return prompts.NOT_TALKED.format(name=name, other=other)
    ended = from_epoch(last.at).astimezone(now.tzinfo)
    days = (now.date() - ended.date()).days
    day = "today" if days == 0 else "yesterday" if days == 1 else f"on {ended:%A %d %B}"
    how = last.memo or f"they exchanged {last.lines} lines"
    return prompts.LAST_TALKED.format(name=name, other=other, when=f"{day} at {ended:%H:%M}", how=how)


def offer_messages(stream: MemoryStream, a: Agent, other: Agent, now: datetime, memories: str) -> list[Message]:
    """The question whether ``a`` starts a conversation with ``other``; ``memories``: what ``a`` recalls of
    ``other``, as prompt lines."""
    return prompts.start_messages(
        a.identity.describe(), a.name, other.name, f"{now:%H:%M}", period(now), gerund(a.mind.activity),
        a.body.location, gerund(other.mind.activity),
        relationship(a.name, other.name, a.social.known.get(other.name), now), memories,
        untold(stream, a, other.name, now))
