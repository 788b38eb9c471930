"""How the offline stand-in model answers planning prompts: the identity's routine, plainly.

It reads the identity paragraph (wake and bed times, home, work, routine) from the
prompt and answers with a sensible ordinary day. The rules for what an agent
remembers (:func:`memstream.offline_events.commitment` reads an event's time, day and
place as ordinary English writes them, knowing the place names the prompt spells out):

- a day plan takes every numbered memory, and the *Currently* line, that sets an
  event on that day, as a stroke at its time and place (citing the memory; an
  event whose end is not said lasts two hours);
- a reaction to an observation that sets an event later today goes there then;
  an observation with an event on another day changes nothing today; otherwise it
  reacts only to an emergency (8+ on the importance rules: a fire, an accident), by
  seeing to it;
- the morning's revision keeps the situation as it was and lists the events still
  to come that the numbered memories set, citing them;
- a correction replaces what it corrects and a cancellation drops it
  (:func:`memstream.offline_news.standing`), in the day plan, the revision and a reaction: an
  observation that moves or calls off an appointment of today drops the old one. A stroke read
  from words ("after lunch") says how it read them (``reading``).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime

from memstream.models import Message, prompt_of, register_rules
from memstream.offline_events import Commitment, commitment, date_words, named_places, partial_commitment
from memstream.offline_news import Standing, standing
from memstream.planning import prompts
from memstream.planning.plan import SLEEPING
from memstream.stream import rate_poignancy

#: The importance tier of emergencies (a fire, an accident, a hospital): what the rules drop everything for.
EMERGENCY = 8
#: How long an event lasts when what set it does not say (the rules' assumption).
EVENT_MINUTES = 120
_LISTED = re.compile(r"^\[(\d+)\] \((\w+ \d{1,2} \w+ \d{4})\) (.+)$", re.M)
_TODAY = re.compile(r"(?:Today is|the morning of|on) (\w+ \d{1,2} \w+ \d{4})")

_WAKE = re.compile(r"Usually wakes at (\d\d:\d\d) and goes to bed at (\d\d:\d\d); lives at (.+)")
_JOB = re.compile(r"Occupation: (.+?)(?: at (.+))?$", re.M)
_ROUTINE = re.compile(r"(\d\d:\d\d) ([^;(]+?) \(([^)]*)\)")
_STROKE = re.compile(r"^(\d\d):(\d\d) (.+?) \(([^)]*)\)(?: until (\d\d:\d\d))?$", re.M)


def _identity(text: str) -> dict:
    wake = _WAKE.search(text)
    job = _JOB.search(text)
    routine_line = next((line for line in text.splitlines() if line.startswith("Routine: ")), "")
    return {
        "wake": wake.group(1) if wake else "07:00", "sleep": wake.group(2) if wake else "23:00",
        "home": wake.group(3).strip() if wake else "home",
        "job": job.group(1).strip() if job else "", "work": (job.group(2) or "").strip() if job else "",
        "routine": [(t, a.strip(), loc) for t, a, loc in _ROUTINE.findall(routine_line)],
    }


def _found(pattern: str | re.Pattern[str], content: str) -> re.Match[str]:
    """Where ``pattern`` matches a line every prompt of its stage holds; a prompt without it is one of
    another version or stage, which this model cannot answer, and says so."""
    regex = re.compile(pattern)
    match = regex.search(content)
    if match is None:
        raise ValueError(f"the offline planner cannot answer this prompt: it has no {regex.pattern!r}")
    return match


def _add(hhmm: str, hours: int) -> str:
    h, m = map(int, hhmm.split(":"))
    return f"{min(h + hours, 23):02d}:{m:02d}"


def _day(text: str) -> date:
    return datetime.strptime(text, "%A %d %B %Y").date()


def _listed(content: str) -> list[tuple[int, date, str]]:
    """The numbered memories of a prompt: ``(number, day written, text)``."""
    return [(int(n), _day(d), text) for n, d, text in _LISTED.findall(content)]


def _currently(content: str) -> list[str]:
    line = next((line[len("Currently: "):] for line in content.splitlines() if line.startswith("Currently: ")), "")
    return [s for s in re.split(r"(?<=[.;])\s+", line) if s]


def _standing(content: str, today: date, *, currently: bool = True) -> list[tuple[Standing, int | None]]:
    """The events that still stand (:func:`memstream.offline_news.standing`) of the Currently line's
    sentences (said today) and the numbered memories (oldest first), with the number of the memory."""
    listed = _listed(content)
    said = [(s, today) for s in _currently(content)] if currently else []
    events = standing([*said, *((text, written) for _, written, text in listed)], named_places(content))
    return [(s, listed[s.index - len(said)][0] if s.index >= len(said) else None) for s in events]


def _events(content: str, today: date) -> list[tuple[Commitment, int | None]]:
    """Events on ``today`` that the numbered memories (with their number) or the Currently line set."""
    found: list[tuple[Commitment, int | None]] = []
    for s, n in sorted(_standing(content, today), key=lambda x: x[1] is None):  # a cited memory before Currently
        c = s.event
        if c.on(today, s.written or today) and all((c.time, c.place) != (k.time, k.place) for k, _ in found):
            found.append((c, n))
    return found


def answer_day(messages: list[Message]) -> str:
    content = prompt_of(messages)
    me = _identity(content)
    if len(me["routine"]) >= prompts.MIN_STROKES - 1:
        strokes = [(me["wake"], "wake up and get ready", me["home"]), *me["routine"]]
    else:
        work, where = (f"work as {me['job']}", me["work"] or me["home"]) if me["job"] else \
            ("spend the morning on personal projects", me["home"])
        strokes = [(me["wake"], "wake up and complete the morning routine", me["home"]),
                   (_add(me["wake"], 1), "have breakfast", me["home"]),
                   (_add(me["wake"], 2), work, where),
                   ("12:00", "have lunch", where),
                   ("13:00", work if me["job"] else "run errands around town", where),
                   ("18:00", "have dinner", me["home"]),
                   ("20:00", "relax and unwind", me["home"])]
    today = _day(_found(_TODAY, content).group(1))
    events = {c.time: c for c, _ in _events(content, today) if me["wake"] <= c.time < me["sleep"]}
    because = {c.time: n for c, n in _events(content, today) if n is not None}
    strokes = sorted({t: (t, a, loc) for t, a, loc in strokes if me["wake"] <= t < me["sleep"] and t not in events}
                     .values())
    strokes = strokes[: prompts.MAX_STROKES - 1 - len(events)]
    out = [{"time": t, "activity": a, "location": loc} for t, a, loc in strokes]
    out += [{"time": t, "activity": c.activity, "location": c.place, "minutes": c.minutes or EVENT_MINUTES,
             **({"because": [because[t]]} if t in because else {}), **({"reading": c.reading} if c.reading else {})}
            for t, c in events.items()]
    out.append({"time": me["sleep"], "activity": "go to bed", "location": me["home"]})
    return json.dumps({"strokes": sorted(out, key=lambda s: s["time"])})


def answer_hours(messages: list[Message]) -> str:
    content = prompt_of(messages)
    me = _identity(content)
    strokes = [(f"{h}:{m}", a, loc, until) for h, m, a, loc, until in _STROKE.findall(content)]
    start = int(_found(r"hour-long blocks from (\d\d):", content).group(1))
    hours = []
    for hour in range(start, 24):
        hhmm = f"{hour:02d}:00"
        if hhmm < me["wake"][:2] + ":00" or hhmm >= me["sleep"]:
            activity, location = SLEEPING, me["home"]
        else:
            current = [s for s in strokes if s[0][:2] <= hhmm[:2] and not (s[3] and s[3] <= hhmm)] or strokes[:1]
            _, activity, location, _ = current[-1]
        hours.append({"hour": hour, "activity": activity, "location": location})
    return json.dumps({"hours": hours})


def answer_actions(messages: list[Message]) -> str:
    content = prompt_of(messages)
    minutes = int(_found(r"fill the whole (\d+) minutes", content).group(1))
    activity = _found(r"plans: (.+) \(at ", content).group(1)
    if activity == SLEEPING:
        return json.dumps({"actions": [{"minutes": prompts.MAX_ACTION, "activity": SLEEPING}]
                           * max(1, minutes // prompts.MAX_ACTION)})
    steps = ["getting started", "in progress", "taking a short break", "in progress", "wrapping up"]
    n = max(1, -(-minutes // prompts.MAX_ACTION))
    base, extra = divmod(minutes, n)
    return json.dumps({"actions": [
        {"minutes": base + (i < extra), "activity": f"{activity}: {steps[min(i, len(steps) - 1)] if n > 1 else ''}"
         .rstrip(": ")} for i in range(n)]})


def answer_react(messages: list[Message]) -> str:
    content = prompt_of(messages)
    observation = _found(r"Observation: (.+)", content).group(1)
    now, today = _found(r"It is (\d\d:\d\d) on (\w+ \d{1,2} \w+ \d{4})\.", content).groups()
    day = _day(today)
    remembered = [line[2:] for line in content.split("Relevant memories:\n", 1)[-1].splitlines()
                  if line.startswith("- ")]
    events = standing([*((m, None) for m in remembered), (observation, day)], named_places(content))
    mine = next((s for s in events if s.index == len(remembered)), None)
    read = partial_commitment(observation, named_places(content), day)
    if read and read.corrects:  # a move or a cancellation: the old appointment of today goes
        old = [c for text in remembered if (c := commitment(text, named_places(content), day))
               and c.on(day, day) and c.time > now and (mine is None or c.time != mine.event.time)]
        drop = old[0].time if old else ""
        if mine and mine.event.on(day, day) and mine.event.time > now:
            return json.dumps({"react": True, "reaction": mine.event.activity, "time": mine.event.time,
                               "location": mine.event.place, "minutes": mine.event.minutes, "drop": drop})
        if drop:
            return json.dumps({"react": True, "reaction": f"carry on: the {old[0].event or 'event'} is called off",
                               "drop": drop})
        return json.dumps({"react": False, "reaction": ""})
    event = commitment(observation, named_places(content), day)
    if event:  # an event: go when it is later today, else nothing changes now
        if event.on(day, day) and event.time > now:
            return json.dumps({"react": True, "reaction": event.activity, "time": event.time,
                               "location": event.place, "minutes": event.minutes})
        return json.dumps({"react": False, "reaction": ""})
    if rate_poignancy(observation) >= EMERGENCY:
        subject = observation.split(" is ")[0] if " is " in observation else "what happened"
        subject = " ".join(subject.split(" in the ")[0].split()[:5])  # "the stove", not where it stands
        return json.dumps({"react": True, "reaction": f"stop and see to {subject}"})
    return json.dumps({"react": False, "reaction": ""})


def answer_revise(messages: list[Message]) -> str:
    content = prompt_of(messages)
    today = _day(_found(_TODAY, content).group(1))
    currently = next((line[len("Currently: "):] for line in content.splitlines() if line.startswith("Currently: ")),
                     "")
    name = _found(re.compile(r"^Name: (.+?) \(age", re.M), content).group(1)
    base = currently.split(" Plans: ")[0].strip() or f"{name} goes about the usual days"
    listed = _listed(content)
    coming: dict[tuple, tuple[int, str]] = {}
    for s, n in _standing(content, today, currently=False):
        c = s.event
        if n is not None and (day := c.next_day(today, s.written or today)):
            coming.setdefault((c.time, c.place, day), (n, f"{c.activity} at {c.place} at {c.time} on "
                                                          f"{date_words(day)}"))
    plans = sorted(coming.values())
    text = base.rstrip(".") + "." + (" Plans: " + "; ".join(p for _, p in plans) + "." if plans else "")
    because = [n for n, _ in plans] or [n for n, _, _ in listed[-3:]]
    return json.dumps({"currently": text, "because": because})


register_rules({prompts.DAY_PURPOSE: answer_day, prompts.REVISE_PURPOSE: answer_revise,
                prompts.HOURS_PURPOSE: answer_hours, prompts.ACTIONS_PURPOSE: answer_actions,
                prompts.REACT_PURPOSE: answer_react})
