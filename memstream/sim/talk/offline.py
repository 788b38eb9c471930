"""How the offline stand-in model talks (rules, not intelligence).

- It starts a conversation with someone its listed memories mention by name.
- A relationship is what its memories say: whom it knows and how, how often they have talked.
- A speaker who came to tell something (a visit: :mod:`memstream.sim.talk.visits`) tells it first, whatever
  its weight, the listener named as "you".
- Each speaker passes on, in its own words (first person for itself, the fact without who told it
  for news heard), up to two items of news (:func:`_news`: by importance, less staleness, novel
  to the listener: not said to it before nor heard from it, not about it), then says goodbye
  (among equally good items, in the order the run's seed draws).
  So several items spread from agent to agent at once, as the paper's party invitation did.
- A memo says what the other told it, turned into the third person; a conversation is as
  poignant as its most poignant line on the importance rules; the planning thought is the first
  event the other mentioned with a time and a place (:func:`memstream.offline_events.commitment`),
  a correction of what the speaker had planned taking its place (:func:`memstream.offline_news.standing`),
  with how its words were read ("'after lunch' as 13:00"); an event already over is nothing to plan.
- News that a correction replaced, and an event whose day is before the latest day the memories
  name in full (a day plan's "Plan for Tuesday 14 February 2023": that day has come), is not passed on.
- An interview answer quotes the remembered statements that share most words with the question,
  leaving out what a correction among them replaced.
- Asked whether it knows of something, it does if a listed memory holds every content word of it.
- As a judge it checks that the answer addresses the question and rests on the memories shown
  (:mod:`memstream.sim.talk.offline_judge`).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime

from memstream.models import Message, prompt_of, register_rules, tie_breaker
from memstream.offline_corrections import cancels
from memstream.offline_events import Commitment, commitment, date_words, named_places
from memstream.offline_news import is_past, latest_day, standing, superseded
from memstream.offline_text import STOPWORDS, content_words, first_person, is_third_person, third_person
from memstream.sim.talk import prompts
from memstream.sim.talk.offline_judge import answer_judge, found
from memstream.sim.talk.parse import MAX_SENTENCE_WORDS
from memstream.stream import rate_poignancy

_MEMORY = re.compile(r"^- \((\w+), importance (\d+)\) (.+)$", re.M)
_TOLD = re.compile(r"^(?:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* told [A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* that )+")
#: Not passed on as news: plans, dialogues, what was seen (someone's doings, an object's state) and the
#: rules' own reflections; what is shared is the speaker's situation and what it was told.
_NOT_SHARED_KINDS = frozenset({"plan", "dialogue", "observation", "reflection"})
_ACQUAINTANCE = re.compile(r"^[^:]+ knows [^:]+: ")  # whom one knows and how: one's own business, not news
_CLOSINGS = ("I should get going.", "Nothing new with me.")
#: A memo of several things told ("A told B that X. A told B that Y.") is several statements.
_STATEMENTS = re.compile(r"(?<=[.!?]) (?=[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* told )")
#: How news is introduced in a line, and how many items a speaker passes on in one conversation.
_HEAR = "Did you hear? "
_ALSO = "And did you hear? "
NEWS_PER_SPEAKER = 2
#: News is worth passing on when its value (importance less staleness) reaches this percentile of the
#: importance of what the speaker recalls in the conversation (its listed memories): relative to what it
#: knows, so an agent full of weighty news keeps ordinary news to itself and a quiet one passes it on.
NEWS_PERCENTILE = 75
#: Never worth passing on, whatever else the speaker knows: the routine tier (a sighting, a meal).
NEWS_FLOOR = 3


def news_worth(content: str) -> int:
    """The least news value worth passing on in this conversation: the ``NEWS_PERCENTILE`` of the listed
    memories' importance (nearest rank), at least ``NEWS_FLOOR``."""
    known = sorted(int(importance) for _, importance, _ in _MEMORY.findall(content))
    if not known:
        return NEWS_FLOOR
    rank = max(0, -(-NEWS_PERCENTILE * len(known) // 100) - 1)
    return max(NEWS_FLOOR, known[rank])


def _news(content: str, speaker: str, listener: str) -> list[tuple[int, str]]:
    """What the speaker could pass on, best first: every statement it was told (a memo of several is
    several) or holds of itself, not of a kind kept to oneself, not a planning thought, not about the
    listener or heard from the listener, not whom the speaker knows. Ranked by its importance as
    rated when it was written (the importance rule weighs who it concerns and whether it is an event
    with a time), less one for each time the speaker is seen passing it on already (it grows stale),
    ties in the order the run's seed draws (``tie_breaker``), so replicates differ where the rules have
    no reason to choose."""
    listed = _MEMORY.findall(content)
    passed_on = " ".join(text for kind, _, text in listed if kind == "dialogue")
    news: list[tuple[int, str]] = []
    for kind, importance, text in listed:
        if kind in _NOT_SHARED_KINDS or text.startswith(prompts.PLANS_PREFIX) or _ACQUAINTANCE.match(text):
            continue
        news.extend((int(importance), statement) for statement in _STATEMENTS.split(text))
    news = [(v, s) for v, s in _current(news, latest_day(content)) if listener not in s]
    stale = {s: passed_on.count(in_my_words(s, speaker).rstrip(".")) for _, s in news}
    draw = tie_breaker(content)
    ranked = sorted(((importance - stale[s], draw.random(), s) for importance, s in news), key=lambda x: (-x[0], x[1]))
    return [(value, s) for value, _, s in ranked]


def _current(news: list[tuple[int, str]], today: date | None) -> list[tuple[int, str]]:
    """``news`` without what a correction among it replaced or called off, and without events over
    before ``today`` (the latest day the memories name, when they name one)."""
    gone = superseded([s for _, s in news])
    kept = [(v, s) for i, (v, s) in enumerate(news) if i not in gone]
    if today is None:
        return kept
    return [(v, s) for v, s in kept if not ((c := commitment(s)) and c.month_day and is_past(c, None, today))]


def in_my_words(fact: str, speaker: str) -> str:
    """A remembered statement as the speaker says it: news without who told it, itself in the first person."""
    text = _TOLD.sub("", fact)
    label = re.match(rf"{re.escape(speaker)}'s (?:current situation|situation on [^:]+): ", text)
    if label:
        rest = text[label.end():]
        text = f"{speaker} {_as_predicate(rest)}" if rest[:1].islower() else rest  # "planning a party"
    if _PRONOUN.search(text):  # "she" may be the speaker or another: the third person throughout keeps it straight
        return text[:1].upper() + text[1:]
    name = re.escape(speaker)
    text = re.sub(rf"\b{name}'s\b", "my", text)
    text = re.sub(rf"(^|\bthat |[.;!?] ){name} (\w+)\b", lambda m: f"{m.group(1)}I {first_person(m.group(2))}", text)
    text = re.sub(rf"(^|\bthat |[.;!?] ){name}\b", r"\1I", text)
    text = re.sub(rf"\b{name}\b", "me", text)
    return text[:1].upper() + text[1:]


#: A third person singular pronoun: a statement holding one is retold in the third person throughout (the rules
#: cannot tell whether it stands for the speaker), so persons are never mixed ("I am ... and she is ...").
_PRONOUN = re.compile(r"\b(?:he|she|him|his|her|hers|himself|herself)\b", re.IGNORECASE)


def _as_predicate(rest: str) -> str:
    """A situation's predicate after the name: "planning a party" -> "is planning a party"."""
    first = rest.split(" ", 1)[0]
    return rest if first in ("has", "is", "does", "was") or is_third_person(first) else f"is {rest}"


_CONTRACTED = {"m": "am", "ve": "have", "ll": "will", "d": "would"}
_YOU_CONTRACTED = {"re": "are", "ve": "have", "ll": "will", "d": "would"}
_YOU_VERBS = {"are": "is", "were": "was", "have": "has", "do": "does"}


def in_their_words(said: str, speaker: str, listener: str) -> str:
    """What ``speaker`` said in the first person, retold by ``listener`` in the third: every first-person
    word in any case ("My daughter", "I'm", "me", "mine") names the speaker, "you" the listener."""
    said = re.sub(r"\bI['’](m|ve|ll|d)\b", lambda m: "I " + _CONTRACTED[m.group(1).lower()], said, flags=re.I)
    said = re.sub(r"\byou['’](re|ve|ll|d)\b", lambda m: "you " + _YOU_CONTRACTED[m.group(1).lower()], said, flags=re.I)
    said = re.sub(r"\bI (\w+)", lambda m: f"{speaker} {third_person(m.group(1))}", said, flags=re.I)
    said = re.sub(r"\byou (are|were|have|do)\b", lambda m: f"{listener} {_YOU_VERBS[m.group(1).lower()]}", said,
                  flags=re.I)
    for pattern, replacement in ((r"\b(?:my|mine)\b", f"{speaker}'s"), (r"\b(?:me|myself|I)\b", speaker),
                                 (r"\b(?:your|yours)\b", f"{listener}'s"), (r"\b(?:you|yourself)\b", listener)):
        said = re.sub(pattern, replacement, said, flags=re.I)
    return said


def _lines(content: str, after: str, before: str) -> list[tuple[str, str]]:
    block = content.split(after, 1)[1].split(before, 1)[0]
    return [(speaker, text) for line in block.splitlines() if ": " in line for speaker, text in [line.split(": ", 1)]]


def answer_start(messages: list[Message]) -> str:
    content = prompt_of(messages)
    other = found(r"Should .+? start a conversation with (.+)\?", content).group(1)
    return json.dumps({"talk": any(other in text for _, _, text in _MEMORY.findall(content))})


def answer_relationship(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name, other = found(r"[Hh]ow does (.+?) know (.+?) and what", content).groups()
    texts = [text for _, _, text in _MEMORY.findall(content)]
    how = next((t.split(": ", 1)[1] for t in texts if t.startswith(f"{name} knows {other}: ")), "")
    talks = sum(t.startswith(f"Conversation with {other}") for t in texts)
    if not how and not talks:
        return json.dumps({"relationship": f"{name} does not know {other} yet"})
    parts = [f"{name} knows {other} ({how})" if how else f"{name} has met {other}"]
    if talks:
        parts.append(f"they have talked {talks} time{'s' if talks > 1 else ''} before")
    return json.dumps({"relationship": "; ".join(parts)})


def answer_turn(messages: list[Message]) -> str:
    """Each side passes on, in turn, up to ``NEWS_PER_SPEAKER`` items of news the listener has not
    had from it (:func:`_news`), then says goodbye."""
    content = prompt_of(messages)
    name = found(r"^You are (.+?)\.\n", content).group(1)
    other = found(r"It is [^.]+\. .+? is talking with (.+?) at ", content).group(1)
    dialogue = content.split("The conversation so far:\n", 1)[1].split("\n\nWhat does", 1)[0]
    turns = [] if dialogue == "(nothing yet)" else dialogue.splitlines()
    told = [text for kind, _, text in _MEMORY.findall(content)  # what the two said to each other before
            if kind == "dialogue" and text.startswith(f"Conversation with {other}:")] + [dialogue]
    worth = news_worth(content)
    came = _came_to_tell(content, name, other)
    news = came if came and not any(came.rstrip(".") in said for said in told) else next(
        (in_my_words(t, name) for value, t in _news(content, name, other)
         if value >= worth and not any(in_my_words(t, name).rstrip(".") in said for said in told)), None)
    first = other.split()[0]
    mine = len(turns[len(turns) % 2::2]) if turns else 0  # lines this side has said already
    heard = bool(turns) and _HEAR.lower() in turns[-1].lower()
    if mine >= NEWS_PER_SPEAKER or (mine and not news and not heard):
        return json.dumps({"utterance": f"Bye, {first}! See you around.", "end": True})
    if mine:
        said = f"{_ALSO}{news}" if news else _CLOSINGS[0]
        return json.dumps({"utterance": ("Good to know. " if heard else "") + said, "end": False})
    opener = f"Hi {first}! " if not turns else "Oh, I didn't know that. " if heard else "Good to see you. "
    share = f"{_HEAR}{news}" if news else _CLOSINGS[1]
    return json.dumps({"utterance": opener + share, "end": False})


def _came_to_tell(content: str, name: str, other: str) -> str | None:
    """What the speaker came to tell the listener (a visit's line), in its own words, the listener as "you"."""
    came = re.search(rf"^{re.escape(name)} came here to tell {re.escape(other)}: (.+)$", content, re.M)
    if came is None:
        return None
    said = in_my_words(came.group(1).strip(), name)
    said = re.sub(rf"\b{re.escape(other)}'s\b", "your", said)
    said = re.sub(rf"(^|\bthat |[.;!?] ){re.escape(other)} is\b", r"\1you are", said)
    return re.sub(rf"\b{re.escape(other)}\b", "you", said)


def _news_from(content: str, name: str) -> tuple[str, list[str]] | None:
    """(who, what) of the news the other side of the dialogue shared, in the order said."""
    said = []
    for speaker, text in _lines(content, ":\n", "\n\n"):
        at = text.lower().find(_HEAR.lower())
        if speaker != name and at >= 0:
            said.append((speaker, text[at + len(_HEAR):].rstrip(".")))
    return (said[0][0], [what for _, what in said]) if said else None


def _after_that(clause: str) -> str:
    """A sentence as it reads after "that": "The party is ..." -> "the party is ..." (a name keeps its capital)."""
    first = clause.split(" ", 1)[0]
    return clause[:1].lower() + clause[1:] if first.lower() in STOPWORDS and first != "I" else clause


def answer_summary(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = found(r"from (.+?)'s point of view", content).group(1)
    a, b = found(r"A conversation between (.+?) and (.+?):\n", content).groups()
    other = b if name == a else a
    news = _news_from(content, name)
    told = [f"{other} told {name} that {_after_that(in_their_words(what, other, name))}." for what in news[1]] \
        if news else [f"{name} chatted with {other}"]
    summary = told[0]  # what else was told, as long as the memo stays within a memo's length
    for more in told[1:]:
        if len(f"{summary} {more}".split()) <= MAX_SENTENCE_WORDS:
            summary = f"{summary} {more}"
    return json.dumps({"summary": summary})


def answer_poignancy(messages: list[Message]) -> str:
    """As poignant as the most poignant thing the other side said."""
    content = prompt_of(messages)
    name = found(r"how poignant is this conversation for (.+)\?", content).group(1)
    heard = [text for speaker, text in _lines(content, "just had:\n", "\n\nOn the scale") if speaker != name]
    return str(max((rate_poignancy(text) for text in heard), default=2))


def answer_plans(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = found(r"Is there anything from this conversation (.+?) needs to remember", content).group(1)
    places = named_places(content)
    when = re.search(r"just had, on (\w+ \d{1,2} \w+ \d{4}) at (\d\d:\d\d)", content)
    now = datetime.strptime(" ".join(when.groups()), "%A %d %B %Y %H:%M") if when else None
    day = now.date() if now else None
    lines = [text for speaker, text in _lines(content, ":\n", "\n\nIs there anything") if speaker != name]
    currently = next((line[len("Currently: "):] for line in content.splitlines() if line.startswith("Currently: ")),
                     "")
    mine = [s for s in re.split(r"(?<=[.;])\s+", currently) if s]
    events = standing([*((s, day) for s in mine), *((t, day) for t in lines)], places)
    for s in events:
        event = s.event
        if s.index >= len(mine) and not (now and is_past(event, s.written, now)):
            reading = f" (read {event.reading})" if event.reading else ""
            moved = " (it was moved)" if event.corrects else ""  # so the plan drops the old appointment
            return json.dumps({"plans": f"{event.activity} at {event.place} {event.hours} {_on(event, content)}"
                                        f"{moved}{reading}"})
    kept = {k for s in events for k in (s.index, *s.replaced)}
    called_off = [c for i, text in enumerate(mine) if i not in kept and (c := commitment(text, places, day))]
    if called_off and any(cancels(t) for t in lines):
        c = called_off[0]
        return json.dumps({"plans": f"the {c.event or 'event'} at {c.place} {c.hours} {_on(c, content)} is cancelled"})
    return json.dumps({"plans": "nothing to plan"})


def _on(event: Commitment, content: str) -> str:
    """The event's day as a date ("on 14 February") when the sentence named it relative to the day of
    the conversation ("tomorrow", "on Tuesday"): a planning thought is read on later days."""
    said = re.search(r"just had, on (\w+ \d{1,2} \w+ \d{4}) at", content)
    if event.month_day or not said:
        return event.when
    today = datetime.strptime(said.group(1), "%A %d %B %Y").date()
    day = event.next_day(today, today)
    return f"on {date_words(day)}" if day else event.when


def answer_interview(messages: list[Message]) -> str:
    """Quote the remembered statements that share most words with the question (then the most important)."""
    content = prompt_of(messages)
    name = found(r"^You are (.+?)\.\n", content).group(1)
    question = set(content_words(content.rsplit("Interviewer: ", 1)[1].split("\n", 1)[0]))
    listed = _MEMORY.findall(content)
    gone = superseded([text for _, _, text in listed])
    ranked = sorted((m for i, m in enumerate(listed) if i not in gone), key=lambda m: (  # most words shared, not seen
        -len(question & set(content_words(m[2]))), m[0] == "observation", -int(m[1])))
    facts = list(dict.fromkeys(f for kind, _, text in ranked for f in _untagged(kind, text, name)))[:3]
    if not facts:
        return "I don't remember anything about that."
    return "From what I remember: " + " ".join(f if f.endswith(".") else f + "." for f in facts)


#: A line of a dialogue, or a statement quoting someone: "Ben Lee: ..." or "Ben Lee says, ...".
_TAG = re.compile(r"^([A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*)(?::| says,?) (.+)$")


#: A speaker's tag inside a dialogue held on one line ("... Ben Lee: Hi! ..."), as the prompt lists memories.
_SPEAKER = re.compile(r"(?:^|(?<=[.!?])\s+)([A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*): ")


def _untagged(kind: str, text: str, name: str) -> list[str]:
    """A memory as ``name`` says it in an answer, without dialogue tags: of a dialogue, the news the other side
    told it, in its own words (nothing when there was none: the chat itself is no answer); of a statement
    quoting someone ("Ben says, the fair is on"), what was said in the third person; else the statement."""
    if kind != "dialogue":
        tagged = _TAG.match(text)
        if tagged and tagged.group(1) != name:
            return [in_my_words(in_their_words(tagged.group(2), tagged.group(1), name), name)]
        return [in_my_words(text, name)]
    parts = _SPEAKER.split(re.sub(r"^Conversation with [^:]+:\s*", "", text))
    told = []
    for speaker, line in zip(parts[1::2], parts[2::2], strict=True):
        at = line.lower().find(_HEAR.lower())
        if speaker != name and at >= 0:
            what = line[at + len(_HEAR):].strip().rstrip(".")
            told.append(in_my_words(in_their_words(what, speaker, name), name) + ".")
    return told


def answer_knows(messages: list[Message]) -> str:
    content = prompt_of(messages)
    name = found(r"^You are (.+?)\.\n", content).group(1)
    fact = found(r"Do you know about this: (.+?)\? Say what", content).group(1)
    terms = set(content_words(fact))
    known = next((t for _, _, t in _MEMORY.findall(content) if terms <= set(content_words(t))), None)
    return json.dumps({"knows": known is not None, "what": in_my_words(known, name) if known else ""})


register_rules({prompts.START_PURPOSE: answer_start, prompts.KNOWS_PURPOSE: answer_knows,
                prompts.JUDGE_PURPOSE: answer_judge, prompts.RELATIONSHIP_PURPOSE: answer_relationship,
                prompts.TURN_PURPOSE: answer_turn, prompts.SUMMARY_PURPOSE: answer_summary,
                prompts.POIGNANCY_PURPOSE: answer_poignancy, prompts.PLANS_PURPOSE: answer_plans,
                prompts.INTERVIEW_PURPOSE: answer_interview})
