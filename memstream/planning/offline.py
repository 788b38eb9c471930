"""How the offline stand-in model answers planning prompts: the identity's routine, plainly.

It reads the identity paragraph (wake and bed times, home, work, routine) from the
prompt and answers with a sensible ordinary day; it reacts to an observation only
when the observation rates as poignant (7+) on the offline importance rules.
"""

from __future__ import annotations

import json
import re

from memstream.models.base import Message
from memstream.models.offline import prompt_of, register_rules
from memstream.planning import prompts
from memstream.planning.plan import SLEEPING
from memstream.stream.offline import rate_poignancy

_WAKE = re.compile(r"Usually wakes at (\d\d:\d\d) and goes to bed at (\d\d:\d\d); lives at (.+)")
_JOB = re.compile(r"Occupation: (.+?)(?: at (.+))?$", re.M)
_ROUTINE = re.compile(r"(\d\d:\d\d) ([^;(]+?) \(([^)]*)\)")
_STROKE = re.compile(r"^(\d\d):(\d\d) (.+?) \(([^)]*)\)$", re.M)


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


def _add(hhmm: str, hours: int) -> str:
    h, m = map(int, hhmm.split(":"))
    return f"{min(h + hours, 23):02d}:{m:02d}"


def answer_day(messages: list[Message]) -> str:
    me = _identity(prompt_of(messages))
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
    strokes = sorted({t: (t, a, loc) for t, a, loc in strokes if me["wake"] <= t < me["sleep"]}.values())
    strokes = strokes[: prompts.MAX_STROKES - 1] + [(me["sleep"], "go to bed", me["home"])]
    return json.dumps({"strokes": [{"time": t, "activity": a, "location": loc} for t, a, loc in strokes]})


def answer_hours(messages: list[Message]) -> str:
    content = prompt_of(messages)
    me = _identity(content)
    strokes = [(f"{h}:{m}", a, loc) for h, m, a, loc in _STROKE.findall(content)]
    start = int(re.search(r"hour-long blocks from (\d\d):", content).group(1))
    hours = []
    for hour in range(start, 24):
        hhmm = f"{hour:02d}:00"
        if hhmm < me["wake"][:2] + ":00" or hhmm >= me["sleep"]:
            activity, location = SLEEPING, me["home"]
        else:
            current = [s for s in strokes if s[0][:2] <= hhmm[:2]] or strokes[:1]
            _, activity, location = current[-1]
        hours.append({"hour": hour, "activity": activity, "location": location})
    return json.dumps({"hours": hours})


def answer_actions(messages: list[Message]) -> str:
    content = prompt_of(messages)
    minutes = int(re.search(r"fill the whole (\d+) minutes", content).group(1))
    activity = re.search(r"plans: (.+) \(at ", content).group(1)
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
    observation = re.search(r"Observation: (.+)", content).group(1)
    if rate_poignancy(observation) >= 7:
        subject = observation.split(" is ")[0] if " is " in observation else "what happened"
        subject = " ".join(subject.split(" in the ")[0].split()[:5])  # "the stove", not where it stands
        return json.dumps({"react": True, "reaction": f"stop and see to {subject}"})
    return json.dumps({"react": False, "reaction": ""})


register_rules({prompts.DAY_PURPOSE: answer_day, prompts.HOURS_PURPOSE: answer_hours,
            prompts.ACTIONS_PURPOSE: answer_actions, prompts.REACT_PURPOSE: answer_react})
