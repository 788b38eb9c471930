"""How the offline stand-in model answers reflection prompts (rules, not intelligence).

Questions come from the most frequent people and activities in the statements;
insights state only what the statements support (an event they announce, a person
talked with often, what the owner keeps doing), citing exactly those statements, or
no insight when they support none (see :func:`answer_insights`).
"""

from __future__ import annotations

import json
import re

from memstream.models import Message, prompt_of, register_rules
from memstream.offline_events import Commitment, commitment, named_places
from memstream.offline_news import is_past, latest_day, superseded
from memstream.offline_text import content_words, frequent, names
from memstream.reflection import prompts

_STATEMENT = re.compile(r"^(\d+)\. (.*)$")
#: A conversation the statement records: a dialogue ("Conversation with Ben: ...") or a memo ("Ben told Ann that").
_TALK = re.compile(r"^(?:Conversation with ([A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*):|([A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*) "
                   r"told )")
#: A person by first and last name, as the subject of a statement or the other party of a doing.
_PERSON = re.compile(r"(?:^|\b(?:with|invited|told|asked|met|and|saw)\s+)([A-Z][a-z]+ [A-Z][a-z]+)\b")


def answer_questions(messages: list[Message]) -> str:
    text = prompt_of(messages).split("\n", 1)[-1]  # the statements, after the line naming whose they are
    people = frequent([n for line in text.splitlines() for n in names(line)], 2)
    words = [w for line in text.splitlines() for w in content_words(line)]
    activities = frequent([w for w in words if w.endswith("ing")], 2)
    topics = frequent(words, 3)
    subject = people[0] if people else "the agent"
    questions = [f"What is {subject} most focused on lately?"]
    if len(people) > 1:
        questions.append(f"What is the relationship between {people[0]} and {people[1]}?")
    if activities:
        questions.append(f"Why does {subject} spend time {activities[0]}?")
    for topic in topics:
        if len(questions) >= prompts.N_QUESTIONS:
            break
        questions.append(f"What does {subject} think about {topic}?")
    return json.dumps({"questions": questions[: prompts.N_QUESTIONS]})


def answer_insights(messages: list[Message]) -> str:
    """Only what the numbered statements support, each insight citing exactly the statements it rests on:

    - an event two or more of them (each from one line or sentence of its statement, :func:`_one_said`)
      (conversations and memos of them: what the owner heard, not its
      own plans or insights) announce with a time, a place and a fixed day (a date or a
      weekday: the statements carry no date, so "tomorrow" cannot be carried over), said once for
      all of them: "Ann has heard of the party at Hobbs Cafe at 17:00 on 14 February 2 times" (an
      event one statement announces is that statement: saying it again would be a restatement,
      which ``memstream.reflection.sense`` drops); not an event a correction among them replaced or
      called off (:func:`memstream.offline_news.superseded`), nor one whose day is before the latest
      day the statements name in full (a day plan's date: that day has come, the event is past);
    - a person the owner has talked with in two or more of them: "Ann has talked with Ben 3 times";
    - someone else (a first and last name) who is the subject or the other party of two or more:
      "Ann often comes across Ben Lee";
    - what the owner was doing in two or more of them: "Ann has been serving 3 times lately";

    and no insight at all (an empty list) when they support none of these.
    """
    content = prompt_of(messages)
    owner = content.splitlines()[0].removeprefix("Statements about ").strip()
    statements = {int(m.group(1)): m.group(2) for line in content.splitlines() if (m := _STATEMENT.match(line))}
    talked = _talked(owner, statements)
    talks = [{"insight": f"{owner} has talked with {who} {len(cited)} times", "because": cited[:5]}
             for who, cited in sorted(talked.items(), key=lambda x: -len(x[1])) if len(cited) >= 2]
    insights = [*_events(owner, statements), *talks, *_people(owner, statements, set(talked)),
                *_doings(owner, statements)]
    return json.dumps({"insights": insights[: prompts.N_INSIGHTS]})


def _events(owner: str, statements: dict[int, str]) -> list[dict]:
    places = named_places("\n".join(statements.values()))
    found: dict[tuple, list[int]] = {}
    said: dict[tuple, Commitment] = {}
    ordered = sorted(statements.items())
    gone = {ordered[i][0] for i in superseded([text for _, text in ordered])}
    today = latest_day("\n".join(statements.values()))
    for n, text in ordered:
        # heard, not the owner's own notes; one statement's event, never stitched from several
        c = _one_said(text, places) if _TALK.match(text) and n not in gone else None
        if c and c.month_day and today and is_past(c, None, today):
            continue
        if c and (c.month_day or c.weekday is not None):
            key = (c.time, c.place.lower(), c.when)
            found.setdefault(key, []).append(n)
            said.setdefault(key, c)
    return [{"insight": f"{owner} has heard of {_called(said[k])} at {said[k].place} {said[k].hours} {said[k].when} "
                        f"{len(cited)} times", "because": cited[:5]} for k, cited in found.items() if len(cited) >= 2]


#: Where one thing said ends in a statement: a speaker's tag ("Ben Lee: ") or a sentence's end before a capital.
_SAID_BREAK = re.compile(r"(?:^|\s)[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*: |(?<=[.!?])\s+(?=[A-Z])")


def _one_said(text: str, places: list[str]) -> Commitment | None:
    """The first event one line or sentence of ``text`` announces with a time and a place: never a place
    from one line and a time or a day from another (a dialogue's lines are several statements)."""
    return next((c for part in _SAID_BREAK.split(text) if part.strip() and (c := commitment(part, places))), None)


def _called(c: Commitment) -> str:
    return f"the {c.event}" if c.event else "an event"


def _talked(owner: str, statements: dict[int, str]) -> dict[str, list[int]]:
    """Whom the statements record the owner talking with, and in which of them."""
    talked: dict[str, list[int]] = {}
    for n, text in sorted(statements.items()):
        talk = _TALK.match(text)
        who = talk and (talk.group(1) or talk.group(2))
        if who and who != owner:
            talked.setdefault(who, []).append(n)
    return talked


def _people(owner: str, statements: dict[int, str], talked: set[str]) -> list[dict]:
    met: dict[str, list[int]] = {}
    for n, text in sorted(statements.items()):
        for who in dict.fromkeys(_PERSON.findall(text)):
            if who != owner and who not in talked:
                met.setdefault(who, []).append(n)
    return [{"insight": f"{owner} often comes across {who}", "because": cited[:5]}
            for who, cited in sorted(met.items(), key=lambda x: -len(x[1])) if len(cited) >= 2]


def _doings(owner: str, statements: dict[int, str]) -> list[dict]:
    doing: dict[str, list[int]] = {}
    for n, text in sorted(statements.items()):
        words = text[len(owner):].split() if text.startswith(f"{owner} is ") else []
        if len(words) > 1 and words[1].endswith("ing"):
            doing.setdefault(words[1], []).append(n)
    return [{"insight": f"{owner} has been {what} {len(cited)} times lately", "because": cited[:5]}
            for what, cited in sorted(doing.items(), key=lambda x: -len(x[1])) if len(cited) >= 2][:1]


register_rules({prompts.QUESTIONS_PURPOSE: answer_questions, prompts.INSIGHTS_PURPOSE: answer_insights})
