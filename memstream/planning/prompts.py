"""Planning prompts (Park et al. 2023, section 4.3), one source of truth, versioned."""

from __future__ import annotations

import json
from typing import NotRequired, TypedDict

from memstream.models import Message, laid_out, one_line, register_answer_tokens

VERSION = 5
DAY_PURPOSE = "planning.day"
HOURS_PURPOSE = "planning.hours"
ACTIONS_PURPOSE = "planning.actions"
REACT_PURPOSE = "planning.react"
REVISE_PURPOSE = "planning.currently"
#: Answers' bounds in tokens (``memstream.models.bounds``), from their shape: a day in 5-12 strokes; up
#: to 24 hour blocks; a block in 5-15 minute actions; a yes/no with a short reaction; a paragraph.
register_answer_tokens({DAY_PURPOSE: 400, HOURS_PURPOSE: 800, ACTIONS_PURPOSE: 500, REACT_PURPOSE: 150,
                        REVISE_PURPOSE: 200})
MIN_STROKES, MAX_STROKES = 5, 8
MIN_ACTION, MAX_ACTION = 5, 15


class ExampleStroke(TypedDict):
    """A stroke as the model answers it (``because``: the memories an appointment rests on)."""

    time: str
    activity: str
    location: str
    because: NotRequired[list[int]]


#: The worked example of a day plan shown in the prompt (someone else's day), as the JSON the model answers.
DAY_EXAMPLE: dict[str, list[ExampleStroke]] = {"strokes": [
    {"time": "06:30", "activity": "wake up and get ready", "location": "home"},
    {"time": "08:00", "activity": "open the bakery", "location": "bakery"},
    {"time": "12:00", "activity": "have lunch", "location": "park"},
    {"time": "13:00", "activity": "bake bread for the evening", "location": "bakery"},
    {"time": "16:00", "activity": "meet Tom for coffee", "location": "cafe", "because": [3]},
    {"time": "18:00", "activity": "cook dinner", "location": "home"},
    {"time": "21:00", "activity": "read and go to bed", "location": "home"}]}
#: The example's strokes away from home: an answer that repeats two of them copied the example.
EXAMPLE_DAY = frozenset((s["activity"].lower(), s["location"]) for s in DAY_EXAMPLE["strokes"]
                        if s["location"] != "home")

#: Where a location comes from when the identity lists the places the agent knows (spatial memory; the sense
#: checks of ``planning.places`` refuse any other).
PLACES_RULE = " Where the description lists the places the person knows, each location is one of them, copied exactly."

# Each prompt is laid out for a server's prefix cache (``memstream.models.layout``): the stage's fixed
# instructions and worked example as the system message; then the agent's identity; then what changes.
DAY_INSTRUCTIONS = (
    "You plan the day of the person described by the user. Outline the plan for the day in {lo} to {hi} "
    "broad strokes, each with the time it starts (24-hour HH:MM) and where it happens. If a numbered memory "
    "sets something for that day at a time and place, make it a stroke at that time and place and cite it: "
    "\"because\": [its number]." + PLACES_RULE + "\n"
    'Answer as JSON {{"strokes": [{{"time": "07:00", "activity": "...", "location": "..."}}]}}, each activity a '
    "short phrase.\n"
    "Example (for someone else): {example}"
)
DAY_TEMPLATE = (
    "{identity}\n\nOn the previous day: {yesterday}\n\n"
    "What {name} remembers of plans, invitations and appointments (numbered, with the day each was noted):\n"
    "{commitments}\n\n"
    "Today is {date}. Outline {name}'s plan for today."
)

HOURS_INSTRUCTIONS = (
    "You plan the day of the person described by the user hour by hour: decompose their plan in broad "
    "strokes into hour-long blocks from the hour given until midnight, one entry per hour, with the activity "
    "and its location (sleeping counts). The hours go in time order, each activity at the hour the plan gives "
    "it; sleep only in the person's night (before they usually wake, after they go to bed)." + PLACES_RULE + "\n"
    'Answer as JSON {"hours": [{"hour": 7, "activity": "...", "location": "..."}]}, one entry for '
    "every hour, each activity a short phrase.\n"
    'Example (for someone else, from 06:00): {"hours": [{"hour": 6, "activity": "wake up and get ready", '
    '"location": "home"}, {"hour": 7, "activity": "have breakfast", "location": "home"}, {"hour": 8, '
    '"activity": "open the bakery", "location": "bakery"}, ...]}'
)
HOURS_TEMPLATE = (
    "{identity}\n\n{name}'s plan for {date} in broad strokes:\n{strokes}\n\n"
    "Decompose the plan into hour-long blocks from {start} until midnight."
)

ACTIONS_INSTRUCTIONS = (
    "You break a block of the plan of the person described by the user into actions of {lo} to {hi} minutes "
    "each that fill the whole block, in order: the minutes add up to exactly the block's, and every action "
    "happens within the block (nothing from other parts of the day)." + PLACES_RULE + "\n"
    'Answer as JSON {{"actions": [{{"minutes": 10, "activity": "...", "location": "..."}}]}}, each activity a '
    "short phrase, the minutes adding up to the whole.\n"
    'Example (for someone else, 60 minutes of baking): {{"actions": [{{"minutes": 10, "activity": "knead the '
    'dough", "location": "bakery"}}, {{"minutes": 15, "activity": "shape the loaves", "location": "bakery"}}, '
    '{{"minutes": 15, "activity": "bake the loaves", "location": "bakery"}}, {{"minutes": 15, "activity": '
    '"clean the counter", "location": "bakery"}}, {{"minutes": 5, "activity": "set out the bread", '
    '"location": "bakery"}}]}}'
)
ACTIONS_TEMPLATE = (
    "{identity}\n\nFrom {start} to {end} {name} plans: {activity} (at {location}).\n"
    "Decompose this into actions that fill the whole {minutes} minutes."
)

REACT_INSTRUCTIONS = (
    "You decide whether the person described by the user reacts to what they observe, and how.\n"
    'Answer as JSON {"react": true, "reaction": "..."} or {"react": false, "reaction": ""}. A reaction is '
    "what the person does, as a short phrase (at most 12 words), not a description. If it is for later today "
    'at a set time, add "time" (HH:MM) and "location"; otherwise it starts now, where the person is or where '
    "what they observed is.\n"
    'Example (for someone else, who sees smoke from the kitchen): {"react": true, "reaction": "turn off the '
    'stove and open the window"}\n'
    'Example (for someone else, just invited to a talk at 18:00 today): {"react": true, "reaction": "go to the '
    'talk at the library", "time": "18:00", "location": "library"}'
)
REACT_TEMPLATE = (
    "{identity}\n\nIt is {time} on {date}. {name} is {action}.\nObservation: {observation}\n"
    "Relevant memories:\n{memories}\n\n"
    "Should {name} react to the observation, and if so, what would be an appropriate reaction?"
)

REVISE_INSTRUCTIONS = (
    "You write the current situation of the person described by the user as of this morning, in one to three "
    "sentences about them in the third person: what they are doing and caring about now, keeping what still "
    "holds and adding what their memories change (plans made, invitations, news). Cite the numbers of the "
    "memories it rests on.\n"
    'Answer as JSON {"currently": "...", "because": [numbers]}.\n'
    'Example (for someone else): {"currently": "Ann runs the bakery and is getting her stall ready for '
    'Saturday\'s market; she agreed to meet Ben at the library on Friday at 15:00.", "because": [2, 5]}'
)
REVISE_TEMPLATE = (
    "{identity}\n\nIt is the morning of {date}. What {name} remembers from before today (numbered):\n"
    "{memories}\n\n"
    "Write {name}'s current situation as of this morning."
)


def numbered_lines(memories: list[tuple[int, str, str]]) -> str:
    """``[n] (day) text`` lines for memories a model may cite by number: ``(number, day, text)``."""
    return "\n".join(f"[{n}] ({day}) {one_line(text)}" for n, day, text in memories) or "(none)"


def day_messages(identity: str, name: str, date: str, yesterday: str, commitments: str) -> list[Message]:
    return laid_out(DAY_INSTRUCTIONS.format(lo=MIN_STROKES, hi=MAX_STROKES, example=json.dumps(DAY_EXAMPLE)),
                    DAY_TEMPLATE.format(identity=identity, name=name, date=date, yesterday=yesterday,
                                        commitments=commitments))


def hours_messages(identity: str, name: str, date: str, strokes: str, start: str) -> list[Message]:
    return laid_out(HOURS_INSTRUCTIONS, HOURS_TEMPLATE.format(identity=identity, name=name, date=date,
                                                              strokes=strokes, start=start))


def actions_messages(identity: str, name: str, start: str, end: str, minutes: int, activity: str,
                     location: str) -> list[Message]:
    return laid_out(ACTIONS_INSTRUCTIONS.format(lo=MIN_ACTION, hi=MAX_ACTION), ACTIONS_TEMPLATE.format(
        identity=identity, name=name, start=start, end=end, minutes=minutes, activity=activity, location=location))


def react_messages(identity: str, name: str, time: str, date: str, action: str, observation: str,
                   memories: str) -> list[Message]:
    return laid_out(REACT_INSTRUCTIONS, REACT_TEMPLATE.format(
        identity=identity, name=name, time=time, date=date, action=action, observation=observation,
        memories=memories))


def revise_messages(identity: str, name: str, date: str, memories: str) -> list[Message]:
    return laid_out(REVISE_INSTRUCTIONS, REVISE_TEMPLATE.format(identity=identity, name=name, date=date,
                                                                memories=memories))
