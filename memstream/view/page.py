"""A run as one self-contained HTML page: the town, the agents moving over simulated time, what
they say, the objects' states, and each agent's memories one click away.

Everything the page shows is packed into it as compact JSON (one string table; events and memories
as arrays of indexes and seconds from the start), and the page's own script and style are inline:
it opens from disk with no server and makes no request (its content security policy forbids any).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from memstream.errors import MemstreamError
from memstream.planning import SLEEPING
from memstream.sim import Map, RunDir, measures
from memstream.stream import OBSERVATION, Memory

TEMPLATE = Path(__file__).with_name("template.html")
#: Memories kept per agent in the page: every one that is not an observation (the newest, up to this many),
#: and observations spread evenly over the run in the room left (a quarter of it at least).
MEMORIES_PER_AGENT = 400


class _Strings:
    """A string table: each distinct text once in the page, referred to by its index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def table(self) -> list[str]:
        return list(self.index)


#: What an agent is doing, as the page colours it: the first class whose test matches an activity wins
#: (see :func:`activity_class`); the page's legend and colours follow this order.
CLASSES = ("asleep", "talking", "on the way", "eating", "working", "other")
#: Words that make an activity a meal (as the start of a word).
MEAL_WORDS = ("breakfast", "lunch", "dinner", "supper", "brunch", "meal", "snack", "eat")
#: Words that make an activity work wherever it happens (at one's workplace it is work in any case).
WORK_WORDS = ("work", "shift", "serve customers", "teach", "lecture", "class", "study", "research", "office")
#: Words that make an activity at one's workplace something other than work (a party at the cafe one works in).
LEISURE_WORDS = ("party", "drink", "relax", "walk", "visit", "celebrat", "game", "date", "hang out")
#: Events that are not what an agent is doing (they happen beside its activity, at its place).
NOT_ACTIVITIES = ("plans the day", "reflects", "is now:", "hears a whisper", "starts a conversation with",
                  "ends the conversation with", "reacts to")
ON_THE_WAY = "on the way to "
TALKING = "talking with "


def _starting_any(words: tuple[str, ...]) -> re.Pattern[str]:
    """A word beginning with one of ``words`` ("eat" finds "eating", not "great")."""
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + ")")


_MEAL, _WORK, _LEISURE = _starting_any(MEAL_WORDS), _starting_any(WORK_WORDS), _starting_any(LEISURE_WORDS)


def activity_class(action: str, location: str, workplace: str | None) -> int:
    """The index in :data:`CLASSES` of an activity, from its text and where it happens.

    Why by words: activities are free text from the plan (a model's or the offline rules'), so
    the only signals are the engine's own fixed phrases (sleeping, talking with, on the way to)
    and the words meals and work are written with; being at one's workplace counts as work unless
    the activity is a leisure one.
    """
    text = action.lower()
    if text == SLEEPING or "sleep" in text or "go to bed" in text or "nap" in text.split():
        return CLASSES.index("asleep")
    if text.startswith(TALKING):
        return CLASSES.index("talking")
    if location.startswith(ON_THE_WAY):
        return CLASSES.index("on the way")
    if _MEAL.search(text):
        return CLASSES.index("eating")
    if _WORK.search(text) or (workplace == location and not _LEISURE.search(text)):
        return CLASSES.index("working")
    return CLASSES.index("other")


def page_data(run: RunDir, fact: str | None = None) -> dict[str, Any]:
    """What the page needs from a run, compacted (times are seconds from the run's start).

    Beside the town's schema: each agent's activities (``moves``: time, building index or -1 on
    the way, action, class), its walks (``trips``: start, arrival, the buildings passed, by the
    same route search as the engine, so the page walks agents along the streets they took), the
    objects' states, conversations (start, end, the two agents, place), utterances, kept memories,
    day plans, and with ``fact`` when each agent first held a memory of it.
    """
    s = _Strings()
    t0 = run.config.start.timestamp()
    end = round(run.end.timestamp() - t0)
    names = run.agents
    agent_of = {n: i for i, n in enumerate(names)}
    residents = {r.name: r for r in run.town.residents}
    town_map = Map(run.town)
    built = [b for a in run.town.areas for b in a.buildings]
    building_of = {b.name: i for i, b in enumerate(built)}
    area_of = {b.name: a.name for a in run.town.areas for b in a.buildings}
    things: list[list[Any]] = []  # [building, room, name, uses, its state when in use]
    thing_of: dict[tuple[int, str], int] = {}
    buildings = []
    for i, b in enumerate(built):
        rooms = []
        for r, room in enumerate(b.rooms):
            rooms.append([room.name, [len(things) + k for k in range(len(room.objects))]])
            for thing in room.objects:
                thing_of.setdefault((i, thing.name), len(things))
                things.append([i, r, thing.name, [u.lower() for u in thing.uses], s(thing.active)])
        buildings.append({"name": b.name, "x": b.x, "y": b.y, "area": area_of[b.name], "rooms": rooms})
    moves: list[list[list[Any]]] = [[] for _ in names]
    says: list[list[int]] = []
    objects: list[list[int]] = []
    conversations: list[list[int]] = []
    talking: dict[frozenset[str], int] = {}  # the open conversation of a pair
    for e in run.records.events():
        t = round(datetime.fromisoformat(e["time"]).timestamp() - t0)
        where, action = e["location"], e["action"]
        if not e["agent"]:
            named, *now_is = action.removeprefix("the ").split(" is ", 1)
            key = (building_of.get(where, -1), named)
            if now_is and key in thing_of:
                objects.append([t, thing_of[key], s(now_is[0])])
            continue
        if e["agent"] not in agent_of:
            continue
        i = agent_of[e["agent"]]
        if "utterance" in e:
            other = action.removeprefix("says to ")
            says.append([t, i, s(e["utterance"]), s(other), talking.get(frozenset((e["agent"], other)), -1)])
        elif action.startswith("starts a conversation with "):
            other = action.removeprefix("starts a conversation with ")
            talking[frozenset((e["agent"], other))] = len(conversations)
            conversations.append([t, end, i, agent_of.get(other, -1), building_of.get(where, -1)])
        elif action.startswith("ends the conversation with "):
            pair = frozenset((e["agent"], action.removeprefix("ends the conversation with ")))
            if pair in talking:
                conversations[talking.pop(pair)][1] = t
        elif not action.startswith(NOT_ACTIVITIES):
            cls = activity_class(action, where, residents[e["agent"]].workplace)
            moves[i].append([t, building_of.get(where, -1), s(action), cls, where])
    trips = [_trips(rows, town_map, built, building_of, residents[n].home, end)
             for rows, n in zip(moves, names, strict=True)]
    for rows in moves:
        for row in rows:
            del row[4]
    memories, plans = [], []
    for name in names:
        everything = run.stream.memories(name) if run.stream.has(name) else []
        memories.append([[m.id, round(m.created_at.timestamp() - t0), s(m.kind), m.importance, s(m.text),
                          list(m.cites)] for m in _kept(everything)])
        plans.append([[round(m.created_at.timestamp() - t0),
                       [[round(datetime.fromisoformat(b["start"]).timestamp() - t0), b["minutes"], s(b["activity"]),
                         s(b["location"])] for b in m.metadata["plan"]["blocks"]]]
                      for m in everything if m.kind == "plan" and isinstance(m.metadata.get("plan"), dict)])
    knows = {}
    if fact:
        knows = {agent_of[a]: round(at.timestamp() - t0) for a, at in measures.first_known(run, fact).items()
                 if a in agent_of}
    return {"run": run.path.name, "town": run.town.name, "start": run.config.start.isoformat(),
            "end": end, "offset_min": _offset_minutes(run.config.start),
            "buildings": buildings, "things": things,
            "paths": [[building_of[a], building_of[b]] for a, b in run.town.paths],
            "agents": [{"name": n, "home": building_of.get(residents[n].home or "", -1),
                        "work": building_of.get(residents[n].workplace or "", -1),
                        "about": residents[n].describe()} for n in names],
            "classes": list(CLASSES), "strings": s.table(), "moves": moves, "trips": trips, "says": says,
            "conversations": conversations, "objects": objects, "memories": memories, "plans": plans,
            "fact": fact or "", "knows": knows}


def _trips(rows: list[list[Any]], town_map: Map, built: list[Any], building_of: dict[str, int], home: str | None,
           end: int) -> list[list[Any]]:
    """An agent's walks: [start, arrival, [building indexes passed]], one per run of "on the way" rows.

    The route is the engine's own (:meth:`Map.route`, from the last building the agent was in),
    and the arrival is the next row at a building (the engine logs arriving), else the run's end.
    """
    out: list[list[Any]] = []
    last = home if home in building_of else built[0].name
    k = 0
    while k < len(rows):
        if rows[k][1] >= 0:
            last = built[rows[k][1]].name
            k += 1
            continue
        goal, start = rows[k][4], rows[k][0]
        while k < len(rows) and rows[k][1] < 0:
            k += 1
        arrive = rows[k][0] if k < len(rows) else end
        target = goal.removeprefix(ON_THE_WAY)
        route = town_map.route(last, target) if target in building_of else [last]
        out.append([start, arrive, [building_of[b] for b in route]])
    return out


def _kept(memories: list[Memory], cap: int = MEMORIES_PER_AGENT) -> list[Memory]:
    """At most about ``cap`` of an agent's memories, so that any time of the run has some to show."""
    if len(memories) <= cap:
        return memories
    others = [m for m in memories if m.kind != OBSERVATION][-cap:]
    seen = [m for m in memories if m.kind == OBSERVATION]
    step = max(1, -(-len(seen) // max(cap - len(others), cap // 4)))
    keep = {m.id for m in others} | {m.id for m in seen[::step]}
    return [m for m in memories if m.id in keep]


def _offset_minutes(t: datetime) -> int:
    offset = t.utcoffset()
    return round(offset.total_seconds() / 60) if offset else 0


def write_page(run_dir: str | Path, out: str | Path, *, fact: str | None = None) -> tuple[Path, int]:
    """Write the page for ``run_dir`` to ``out``; its path and size in bytes."""
    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise MemstreamError(f"-o {out} must end in .html")
    if out.is_dir() or not out.parent.is_dir():
        raise MemstreamError(f"-o {out}: name a file in an existing folder")
    with RunDir.open(run_dir) as run:
        html = render(run, fact)
    tmp = out.with_name(out.name + ".partial")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return out, out.stat().st_size


def render(run: RunDir, fact: str | None = None, *, served: bool = False) -> str:
    """The page's HTML. ``served``: from ``memstream view --serve``, whose search box asks its server."""
    data = {**page_data(run, fact), "served": served}
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    html = TEMPLATE.read_text(encoding="utf-8").replace("__TITLE__", escape(f"{data['town']}: {data['run']}"))
    html = html.replace("__CONNECT__", " connect-src 'self';" if served else "")
    return html.replace("__DATA__", payload)

