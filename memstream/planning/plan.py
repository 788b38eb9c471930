"""A day plan as plain data: broad strokes, hour blocks covering the whole day, and the
5-15 minute actions of the blocks decomposed so far. ``action_at(t)`` is what the
simulation asks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NotRequired, TypedDict

from memstream.planning.prompts import MAX_ACTION, MIN_ACTION
from memstream.timeutil import minute_of_day

#: The activity of the hours an agent sleeps (before waking, after bedtime).
SLEEPING = "sleeping"


class StrokeRecord(TypedDict):
    """A :class:`Stroke` as a plan memory's metadata and ``memstream plan --json`` hold it (dumped as is)."""

    time: str
    activity: str
    location: str
    minutes: NotRequired[int]
    cites: NotRequired[list[int]]
    reading: NotRequired[str]
    why: NotRequired[str]


class ActionRecord(TypedDict):
    start: str
    minutes: int
    activity: str
    location: str


class BlockRecord(TypedDict):
    start: str
    minutes: int
    activity: str
    location: str
    importance: int | None
    actions: list[ActionRecord]


class DayPlanRecord(TypedDict):
    """A :class:`DayPlan` as JSON data: what :meth:`DayPlan.to_dict` writes and :meth:`DayPlan.from_dict` reads."""

    owner: str
    day: str
    strokes: list[StrokeRecord]
    blocks: list[BlockRecord]
    memory_id: int | None


@dataclass
class Stroke:
    """One broad stroke of a day plan. An *appointment* is a stroke that rests on memories (an
    invitation, a meeting agreed in conversation): it cites them, keeps its hours whatever the hour
    blocks say, and lasts ``minutes`` if given (else until the next stroke)."""

    time: str  # HH:MM
    activity: str
    location: str
    minutes: int | None = None
    cites: tuple[int, ...] = ()
    reading: str = ""  # how the cited memories' words were read as this time ("'after lunch' as 13:00 ...")
    why: str = ""  # what the caller that added it says of it (a visit to tell news: whom, what, why them)

    @property
    def appointment(self) -> bool:
        return bool(self.cites)

    def to_dict(self) -> StrokeRecord:
        out: StrokeRecord = {"time": self.time, "activity": self.activity, "location": self.location}
        if self.minutes is not None:
            out["minutes"] = self.minutes
        if self.cites:
            out["cites"] = list(self.cites)
        if self.reading:
            out["reading"] = self.reading
        if self.why:
            out["why"] = self.why
        return out

    @classmethod
    def from_dict(cls, data: StrokeRecord) -> Stroke:
        return cls(data["time"], data["activity"], data["location"], data.get("minutes"),
                   tuple(data.get("cites", ())), data.get("reading", ""), data.get("why", ""))


def appointment_span(stroke: Stroke, strokes: list[Stroke]) -> tuple[int, int]:
    """Minutes of the day an appointment holds: its length if given, else until the next stroke."""
    start = minute_of_day(stroke.time)
    if stroke.minutes:
        return start, min(start + stroke.minutes, 24 * 60)
    later = [minute_of_day(s.time) for s in strokes if minute_of_day(s.time) > start]
    return start, min(later, default=24 * 60)


@dataclass
class Action:
    start: datetime
    minutes: int
    activity: str
    location: str

    @property
    def end(self) -> datetime:
        return self.start + timedelta(minutes=self.minutes)


@dataclass
class Block:
    start: datetime
    minutes: int
    activity: str
    location: str
    actions: list[Action] = field(default_factory=list)
    importance: int | None = None  # the model's rating of the block's decomposition (its actions share it)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(minutes=self.minutes)


@dataclass
class DayPlan:
    owner: str
    day: datetime  # midnight at the start of the day, with its zone
    strokes: list[Stroke]
    blocks: list[Block]
    memory_id: int | None = None

    @property
    def end(self) -> datetime:
        return self.day + timedelta(days=1)

    def block_at(self, t: datetime) -> Block:
        for block in reversed(self.blocks):  # blocks are contiguous and in order: the last that has begun
            if block.start <= t:
                if t < block.end:
                    return block
                break
        raise ValueError(f"{t.isoformat()} is outside the plan for {self.day.date()}")

    def action_at(self, t: datetime) -> Action | None:
        """The action under way at ``t``, or None if its block is not decomposed yet."""
        for action in self.block_at(t).actions:
            if action.start <= t < action.end:
                return action
        return None

    def summary(self) -> str:
        return f"Plan for {self.day:%A %d %B %Y}: " + "; ".join(
            f"{s.time} {s.activity} ({s.location})" for s in self.strokes)

    def to_dict(self) -> DayPlanRecord:
        """JSON-ready data (written by hand: ``dataclasses.asdict`` was a tenth of a large run's time)."""
        return {
            "owner": self.owner, "day": self.day.isoformat(),
            "strokes": [s.to_dict() for s in self.strokes],
            "blocks": [{"start": b.start.isoformat(), "minutes": b.minutes, "activity": b.activity,
                        "location": b.location, "importance": b.importance,
                        "actions": [{"start": a.start.isoformat(), "minutes": a.minutes, "activity": a.activity,
                                     "location": a.location} for a in b.actions]}
                       for b in self.blocks],
            "memory_id": self.memory_id,
        }

    @classmethod
    def from_dict(cls, data: DayPlanRecord) -> DayPlan:
        blocks = [Block(datetime.fromisoformat(b["start"]), b["minutes"], b["activity"], b["location"],
                        [Action(datetime.fromisoformat(a["start"]), a["minutes"], a["activity"], a["location"])
                         for a in b["actions"]], b.get("importance"))
                  for b in data["blocks"]]
        return cls(data["owner"], datetime.fromisoformat(data["day"]), [Stroke.from_dict(s) for s in data["strokes"]],
                   blocks, data.get("memory_id"))


def fit_actions(block: Block, proposed: list[tuple[int, str, str]]) -> list[Action]:
    """Lay proposed ``(minutes, activity, location)`` end to end so they fill ``block`` exactly.

    Actions are 5-15 minutes: a longer one is split into parts of the same activity. Proposed
    actions that fall short of the block are stretched in proportion (a plan of 20 minutes for an
    hour takes three times as long, in the same order), never padded with filler; an excess is cut
    from the end. Only a block shorter than 5 minutes holds an action under 5.
    """
    queue = [(max(int(m), 1), a or block.activity, loc or block.location) for m, a, loc in proposed] or [
        (block.minutes, block.activity, block.location)]
    total = sum(m for m, _, _ in queue)
    if total < block.minutes:
        queue = [(round(m * block.minutes / total), a, loc) for m, a, loc in queue]
    actions: list[Action] = []
    t, left = block.start, block.minutes
    for minutes, activity, location in queue:
        while left > 0 and minutes >= MIN_ACTION or (left > 0 and not actions):
            m = _take(minutes, left)
            actions.append(Action(t, m, activity, location))
            t, left, minutes = t + timedelta(minutes=m), left - m, minutes - m
    while left > 0:  # what rounding left over: the last action goes on
        last = actions[-1]
        m = _take(MAX_ACTION, left)
        actions.append(Action(t, m, last.activity, last.location))
        t, left = t + timedelta(minutes=m), left - m
    return actions


def _take(minutes: int, left: int) -> int:
    """A duration in 5-15 that never leaves a remainder under 5 minutes."""
    m = min(max(minutes, MIN_ACTION), MAX_ACTION, left)
    if 0 < left - m < MIN_ACTION:
        m = left if left <= MAX_ACTION else left - MIN_ACTION
    return m
