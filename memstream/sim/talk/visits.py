"""An agent with news seeks the people it concerns: a visit in its day plan, which opens a conversation.

Generic rules, the same for every model and every town (the visit is laid by the simulation around the
model's day plan, not asked of the model), read from the agent's memories and the town's residents:

- **news**: what the agent holds as a thought (a whisper, the memo of a conversation) written in the day
  before it plans, rated at least ``SEEK_IMPORTANCE``; not a planning thought nor the morning's revision of
  its own situation (that is about itself), not one a correction among
  them replaced (:func:`memstream.offline_news.superseded`), not an event already over.
- **whom it concerns**: another resident it names (by full name or first name), or whose home, workplace
  or occupation it names ("the bakery on the lane", "the postmen"); never the one whose own doings it
  tells (it begins with their name, who told it aside: "Ann is opening a shop" is Ann's own news, "Ann's
  boat has broken loose" is not), nor
  the one the agent heard it from, nor one it has told it already (:func:`memstream.sim.talk.offer.told`).
- **where to find them**: for a home or workplace named, that place; for a name or an occupation, the
  workplace; in the hours the person's routine puts them there (a home with no routine hours there: the
  hour before bedtime). One visit a place (a group found at one place is told in one visit), never to the
  agent's own home or workplace (it meets them there anyway). The town knows where its people live and
  work: a place the agent did not know it knows from then on, as told.
- **when**: at most ``VISITS_PER_DAY`` a day, the weightiest news first; each ``VISIT_MINUTES`` long at the
  earliest time in those hours that leaves ``SETTING_OFF_MINUTES`` after the plan is made, within the
  agent's waking hours, clear of its appointments and of its other visits.

The visit is an appointment of the plan: it cites the news memory, and its ``why`` says whom it seeks and
why ("to tell Ann Lee: ...; the news names Quay Bakery, where Ann Lee works"). At the place in its hours,
the agent calls on the first of them there (no offer asked: it came to talk), within both sides' day of
attention (:data:`memstream.sim.talk.conversation.ATTENTION_PER_DAY`), and the conversation's purpose is
the news, which the agent's first line tells.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memstream.offline_events import commitment
from memstream.offline_news import is_past, superseded
from memstream.planning import SLEEPING, Stroke, appointment_span
from memstream.sim.agents.agent import Agent, Visit
from memstream.sim.talk.offer import told
from memstream.stream import THOUGHT, Memory, MemoryStream
from memstream.timeutil import minute_of_day

#: Visits at most in a day (the day's attention is shared with every other conversation).
VISITS_PER_DAY = 2
#: A visit's length, and the least time between the plan and a visit (to walk there).
VISIT_MINUTES, SETTING_OFF_MINUTES = 30, 30
#: The least importance of news worth a visit (the middle of the scale: above the mundane).
SEEK_IMPORTANCE = 5
#: The newest memories looked through for news.
LOOK_BACK = 400
#: A routine's place as the town's building ("" if it names none).
Resolve = Callable[[str], str]
#: How a remembered statement names who told it ("Ann Lee told Ben Roy that ..."), stripped to find its subject.
_TOLD = re.compile(r"^(?:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* told [A-Z][\w'’-]*(?: [A-Z][\w'’-]*)* that )+")
#: A whisper's or a situation's label before the statement.
_LABEL = re.compile(r"^[^:]{1,80}'s (?:current situation|situation on [^:]+): ")


@dataclass(frozen=True)
class Seek:
    """A place to visit, whom the agent seeks there, the news and why it concerns them."""

    place: str
    persons: tuple[str, ...]
    news: Memory
    because: str


def _words(phrase: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(phrase)}(?:s|es)?(?!\w)", re.I)


def _subject(text: str, full: str, first: str) -> bool:
    """Whether ``text`` (who told it aside) is of the person's own doings: it begins with their name (not
    their name's "'s": "Ann's boat has broken loose" is news to Ann)."""
    said = _LABEL.sub("", _TOLD.sub("", text))
    return re.match(rf"(?:{re.escape(full)}|{re.escape(first)})\b(?!['’]s\b)", said) is not None


def concern(text: str, other: Agent) -> tuple[tuple[str, ...], str] | None:
    """(where to find ``other``, the likeliest first; why) if ``text`` concerns them, else None."""
    r = other.resident
    full, first = r.name, r.name.split()[0]
    if _subject(text, full, first):  # news of their own doings: they know it
        return None
    if re.search(rf"(?<!\w)(?:{re.escape(full)}|{re.escape(first)})(?!\w)", text):
        return (r.workplace, r.home), f"the news names {full}"
    if r.home and _words(r.home).search(text):
        return (r.home,), f"the news names {r.home}, where {full} lives"
    if r.workplace and _words(r.workplace).search(text):
        return (r.workplace,), f"the news names {r.workplace}, where {full} works"
    if r.occupation and _words(r.occupation).search(text):
        return (r.workplace, r.home), f"the news names {full}'s occupation ({r.occupation})"
    return None


def news(stream: MemoryStream, a: Agent, now: datetime) -> list[Memory]:
    """``a``'s news of the day before ``now``, the weightiest first, then the newest (see the module)."""
    if not stream.has(a.name):
        return []
    since = now - timedelta(days=1)
    day = [m for m in stream.recent(a.name, LOOK_BACK) if m.kind == THOUGHT and since <= m.created_at <= now
           and not m.metadata.get("planning") and "currently" not in m.metadata and m.importance >= SEEK_IMPORTANCE]
    gone = superseded([m.text for m in day])
    kept = [m for i, m in enumerate(day) if i not in gone
            and not ((c := commitment(m.text, (), m.created_at.date())) and is_past(c, m.created_at.date(), now))]
    return sorted(kept, key=lambda m: (-m.importance, -m.created_at.timestamp(), -m.id))


def seeks(stream: MemoryStream, a: Agent, others: Iterable[Agent], now: datetime, resolve: Resolve) -> list[Seek]:
    """The places ``a`` would visit to tell its news, the weightiest news first (at most ``VISITS_PER_DAY``).
    ``resolve``: a routine's place as the town's building."""
    r = a.resident
    mine = {r.home, r.workplace}
    found: dict[str, Seek] = {}
    for memory in news(stream, a, now):
        heard_from = memory.metadata.get("with_")
        for other in others:
            if other.name in (a.name, heard_from):
                continue
            said = a.social.known.get(other.name)
            if said and told(memory.text, said.said, a.name):
                continue
            where = concern(memory.text, other)
            if where is None:
                continue
            places, because = where
            place = next((p for p in places if p and p not in mine and hours_at(other, p, resolve)), None)
            if place is None:
                continue
            seek = found.get(place)
            if seek is None and len(found) < VISITS_PER_DAY:
                found[place] = Seek(place, (other.name,), memory, because)
            elif seek is not None and seek.news.id == memory.id and other.name not in seek.persons:
                found[place] = Seek(place, (*seek.persons, other.name), memory, f"{seek.because}; {because}")
    return list(found.values())


def hours_at(other: Agent, place: str, resolve: Resolve) -> list[tuple[int, int]]:
    """The minutes of the day ``other``'s routine puts it at ``place`` (a home it keeps no hours at: the hour
    before bedtime)."""
    r = other.resident
    items = sorted(r.routine, key=lambda i: i.time)
    spans = []
    for i, item in enumerate(items):
        if resolve(item.location) == place:
            end = minute_of_day(items[i + 1].time) if i + 1 < len(items) else minute_of_day(r.sleep)
            spans.append((minute_of_day(item.time), min(end, minute_of_day(r.sleep))))
    if not spans and place == r.home:
        bed = minute_of_day(r.sleep)
        spans.append((max(minute_of_day(r.wake), bed - 60), bed))
    return [(a, b) for a, b in spans if b > a]


def lay(seek: Seek, hours: list[tuple[int, int]], a: Agent, now: datetime, strokes: list[Stroke],
        taken: list[tuple[int, int]]) -> int | None:
    """The earliest minute of the day a visit fits in ``hours`` (see the module), or None."""
    r = a.resident
    earliest = now.hour * 60 + now.minute + SETTING_OFF_MINUTES
    earliest = -(-earliest // 10) * 10  # on the ten minutes, as people say a time
    wake, sleep = minute_of_day(r.wake), minute_of_day(r.sleep)
    busy = [appointment_span(s, strokes) for s in strokes if s.appointment] + taken
    for start, end in sorted(hours):
        t = max(start, earliest, wake)
        while t + VISIT_MINUTES <= min(end, sleep):
            if not any(t < b and a_ < t + VISIT_MINUTES for a_, b in busy):
                return t
            t += 10
    return None


def plan_visits(stream: MemoryStream, a: Agent, agents: dict[str, Agent], now: datetime,
                strokes: list[Stroke], resolve: Resolve) -> tuple[list[Stroke], list[Visit]]:
    """The visit strokes to add to ``a``'s plan for the day of ``now`` and the visits they are."""
    others = [agents[n] for n in sorted(agents)]
    added: list[Stroke] = []
    visits: list[Visit] = []
    taken: list[tuple[int, int]] = []
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    for seek in seeks(stream, a, others, now, resolve):
        hours = [h for n in seek.persons for h in hours_at(agents[n], seek.place, resolve)]
        t = lay(seek, hours, a, now, strokes, taken)
        if t is None:
            continue
        taken.append((t, t + VISIT_MINUTES))
        whom = " and ".join(seek.persons)
        why = f"to tell {whom}: {seek.news.text}; {seek.because}"
        added.append(Stroke(f"{t // 60:02d}:{t % 60:02d}", f"visit {whom}", seek.place, VISIT_MINUTES,
                            (seek.news.id,), why=why))
        start = day + timedelta(minutes=t)
        visits.append(Visit(start=start.timestamp(), end=(start + timedelta(minutes=VISIT_MINUTES)).timestamp(),
                            place=seek.place, persons=list(seek.persons), news=seek.news.text,
                            memory=seek.news.id))
    return added, visits


def due(a: Agent, now: datetime) -> Visit | None:
    """The visit ``a`` is making now, where it stands (it has arrived), with someone left to tell."""
    t = now.timestamp()
    return next((v for v in a.social.visits if v.start <= t < v.end and v.persons and v.place == a.body.location
                 and not a.body.route and a.mind.activity != SLEEPING), None)
