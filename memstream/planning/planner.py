"""Planning: a day plan in broad strokes, hour blocks, and 5-15 minute actions decomposed lazily.

As in the paper: at the start of a day the agent outlines 5-8 broad strokes from
its identity and a summary of the previous day retrieved from memory; the day is
split into hour blocks (sleep included, so the blocks cover the day without gaps
or overlaps); only the block being entered is decomposed into actions, to save
model calls. Plans are memories (``kind=plan``), retrieved like any other. An
observation may warrant a reaction: then the rest of the day from ``now`` is
planned again, and the new plan memory cites the one it supersedes (the stream
stays append-only; the past part of the plan is kept as it was).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import NamedTuple

from memstream.errors import MemstreamError
from memstream.models import ChatModel, Request, Stage, one_line, run_direct
from memstream.planning import prompts
from memstream.planning.answers import actions_answer, hours_answer, hours_salvage, reaction_answer, strokes_answer
from memstream.planning.identity import Identity
from memstream.planning.parse import StrokeIn, parse_strokes
from memstream.planning.places import KnownPlaces
from memstream.planning.plan import (
    SLEEPING,
    Action,
    Block,
    DayPlan,
    Stroke,
    appointment_span,
    fit_actions,
)
from memstream.planning.sense import Anchor, DayFrame, short_of, timed_words
from memstream.stream import PLAN, Memory, MemoryStream, importance_stage, new_memory
from memstream.timeutil import minute_of_day, require_aware

YESTERDAY_K = 10
#: Memories a day plan is shown as possible commitments (invitations, meetings agreed, planning thoughts).
COMMITMENTS_K = 10
#: A day outline short of MIN_STROKES twice is still kept if it has this many (the hours fill the rest).
SALVAGED_STROKES = 3
#: What a waking hour holds when neither the plan nor the routine says (never sleep: the agent is awake).
UNPLANNED = "go about the day"


def start_of_day(t: datetime) -> datetime:
    """Midnight of ``t``'s day in ``t``'s own zone: where a day plan's hours are counted from."""
    t = require_aware(t, "day")
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def _yesterday(stream: MemoryStream, identity: Identity, now: datetime) -> str:
    if not stream.has(identity.name):
        return "nothing is remembered yet"
    # The day before first, ranked by the paper's score within it: a time weight above the other
    # three together lifts every memory of yesterday over every other (the score alone would
    # bring back the most poignant days, however old).
    w = stream.weights
    weights = w.model_copy(update={"time": 1.0 + w.recency + w.importance + w.relevance})
    recalls = stream.retrieve(identity.name, f"What did {identity.name} do yesterday?", now=now, k=YESTERDAY_K,
                              weights=weights, touch=False)
    return "; ".join(one_line(r.memory.text) for r in recalls) or "nothing is remembered yet"


def listing(memories: list[Memory]) -> str:
    """Memories numbered from 1 for a prompt, with the day each was written (answers cite the numbers)."""
    return prompts.numbered_lines([(n, f"{m.created_at:%A %d %B %Y}", m.text) for n, m in enumerate(memories, 1)])


def cited(numbers: list[int], listed: list[Memory]) -> tuple[int, ...]:
    """The ids of the listed memories an answer cites by number; numbers it was not shown are dropped."""
    return tuple(dict.fromkeys(listed[n - 1].id for n in numbers if 1 <= n <= len(listed)))


def _commitments(stream: MemoryStream, identity: Identity, now: datetime) -> list[Memory]:
    """What the agent remembers that may set something for the day: retrieved, oldest first."""
    if not stream.has(identity.name):
        return []
    query = f"{identity.name}'s plans, invitations and appointments for {now:%A %d %B}"
    recalls = stream.retrieve(identity.name, query, now=now, k=COMMITMENTS_K)
    return sorted((r.memory for r in recalls), key=lambda m: (m.created_at, m.id))


class Written(NamedTuple):
    """A memory a stage wrote: its id and the importance the model gave it."""

    id: int
    importance: int


def write_rated(stream: MemoryStream, owner: str, text: str, at: datetime, metadata: dict,
                cites: tuple[int, ...] = (), kind: str = PLAN) -> Stage[Written]:
    """Write a planning memory, its importance rated by the model."""
    importance = (yield from importance_stage([text]))[0]
    return Written(stream.write(new_memory(owner=owner, text=text, kind=kind, created_at=at, importance=importance,
                                           cites=cites, metadata={**metadata, "prompt_version": prompts.VERSION})),
                   importance)


def _blocks(identity: Identity, day: datetime, strokes: list[Stroke], start: datetime,
            extra: str = "", anchors: tuple[Anchor, ...] = (), told: tuple[str, ...] = ()) -> Stage[list[Block]]:
    """Blocks from ``start`` to midnight, an hour each (an appointment starts and ends its own).

    ``told``: places the caller's added strokes go to, known for this plan though the identity it was made
    from did not know them yet (a visit's place, which the agent learns as it plans the visit).

    An hour the model leaves out keeps the stroke in force; an appointment keeps its hours whatever
    the model's hours say, and the identity's wake and bed times decide when the agent sleeps. The
    hours are sense-checked against the strokes, the routine and ``anchors`` (a reaction's).
    """
    listing_ = "\n".join(f"{s.time} {s.activity} ({s.location})" + (f" until {_hhmm(appointment_span(s, strokes)[1])}"
                                                                     if s.minutes else "") for s in strokes) + extra
    waking = tuple(h for h in range(start.hour, 24)
                   if identity.wake <= f"{h:02d}:59" and f"{h:02d}:00" < identity.sleep)
    frame, places = DayFrame.of(identity, strokes, anchors), KnownPlaces.of(identity).knowing(told)
    hours = (yield Request(prompts.HOURS_PURPOSE, prompts.hours_messages(
        identity.describe(), identity.name, f"{day:%A %d %B %Y}", listing_, f"{start:%H:%M}"),
        partial(hours_answer, frame=frame, must_cover=waking, name=identity.name, places=places),
        salvage=partial(hours_salvage, frame=frame, name=identity.name, places=places))) or []
    # hours left out (or dropped by the salvage): the stroke in force
    return _lay_blocks(identity, day, strokes, start, {h.hour: (h.activity, h.location) for h in hours})


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _lay_blocks(identity: Identity, day: datetime, strokes: list[Stroke], start: datetime,
                by_hour: dict[int, tuple[str, str]]) -> list[Block]:
    """The blocks from ``start`` to midnight, given the activity and place the model gave each hour."""
    appointments = [(appointment_span(s, strokes), s) for s in strokes if s.appointment]
    cuts = sorted({m for span in appointments for m in span[0]})
    blocks, t, midnight = [], start, day + timedelta(days=1)
    while t < midnight:
        minute = int((t - day).total_seconds() // 60)
        end = min(t.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1), midnight)
        cut = next((c for c in cuts if minute < c < (end - day).total_seconds() // 60), None)
        if cut is not None:
            end = day + timedelta(minutes=cut)
        stroke = _stroke_at(strokes, f"{t:%H:%M}", identity)
        given = by_hour.get(t.hour)
        if given and (given[0] == SLEEPING) != (stroke.activity == SLEEPING):
            given = None  # the identity's wake and bed times decide when the agent sleeps, not the model
        fixed = next((s for (a, b), s in appointments if a <= minute < b), None)
        if fixed and stroke.activity != SLEEPING:
            activity, location = fixed.activity, fixed.location
        else:
            activity = given[0] if given else stroke.activity
            location = given[1] if given and given[1] else stroke.location
        blocks.append(Block(t, int((end - t).total_seconds() // 60), activity, location))
        t = end
    return blocks


def routine_plan(identity: Identity, day: datetime) -> DayPlan:
    """The day as the identity's routine lays it out, with no model and nothing written (an agent
    without planning, as in the paper's ablations): each block one activity, in 5-15 minute parts."""
    day = start_of_day(day)
    strokes = [Stroke(identity.wake, "wake up and get ready", identity.home)] + [
        Stroke(r.time, r.activity, r.location) for r in identity.routine if r.time > identity.wake]
    blocks = _lay_blocks(identity, day, strokes, day, {})
    for block in blocks:
        block.actions = fit_actions(block, [])
    return DayPlan(identity.name, day, strokes, blocks)


def _stroke_at(strokes: list[Stroke], hhmm: str, identity: Identity) -> Stroke:
    if hhmm < identity.wake or hhmm >= identity.sleep:
        return Stroke(hhmm, SLEEPING, identity.home)
    minute = minute_of_day(hhmm)
    current = [s for s in strokes if s.time <= hhmm
               and not (s.appointment and appointment_span(s, strokes)[1] <= minute)]  # an ended appointment
    if current:
        return current[-1]
    # awake before the plan's first stroke: the routine's item in force, never sleep at a waking hour
    routine = [r for r in identity.routine if r.time <= hhmm]
    return Stroke(hhmm, routine[-1].activity, routine[-1].location) if routine else Stroke(hhmm, UNPLANNED,
                                                                                            identity.home)


def _strokes(answer: list[StrokeIn], listed: list[Memory], home: str) -> list[Stroke]:
    """The model's strokes as a plan's, appointments kept first when there are too many."""
    strokes = []
    for s in answer:
        cites = cited(s.because, listed)
        strokes.append(Stroke(s.time, s.activity.strip(), s.location.strip() or home,
                              s.minutes if cites else None, cites, s.reading.strip() if cites else ""))
    kept = [s for s in strokes if s.appointment][: prompts.MAX_STROKES]
    kept += [s for s in strokes if not s.appointment][: prompts.MAX_STROKES - len(kept)]
    return sorted(kept, key=lambda s: s.time)


def plan_day_stage(stream: MemoryStream, identity: Identity, day: datetime, *,
                   revision: int | None = None,
                   add: Callable[[list[Stroke]], list[Stroke]] | None = None) -> Stage[DayPlan]:
    """Make ``identity``'s plan for the day that contains ``day`` and write it to the stream.

    The plan is shown what the agent remembers of plans and invitations; a stroke that rests on one
    is an appointment and the plan memory cites it (and ``revision``, the morning's revised situation).
    ``add``: given the model's strokes, appointments the caller adds around them (a simulation's visits
    to tell news), laid into the hours like the model's own.
    """
    now = require_aware(day, "day")
    day = start_of_day(now)
    listed = _commitments(stream, identity, now)
    answer = yield Request(prompts.DAY_PURPOSE, prompts.day_messages(
        identity.describe(), identity.name, f"{day:%A %d %B %Y}", _yesterday(stream, identity, now),
        listing(listed)),
        partial(strokes_answer, at_least=prompts.MIN_STROKES, name=identity.name, places=KnownPlaces.of(identity)),
        salvage=partial(parse_strokes, at_least=SALVAGED_STROKES, name=identity.name))  # places: the sim resolves
    if not answer:  # no usable plan from the model: the identity's own routine
        answer = [StrokeIn(time=r.time, activity=r.activity, location=r.location) for r in identity.routine] or [
            StrokeIn(time=identity.wake, activity=UNPLANNED, location=identity.home)]
    strokes = _strokes(answer, listed, identity.home)
    added = add(strokes) if add is not None else []
    strokes = sorted(strokes + added, key=lambda s: s.time)
    plan = DayPlan(identity.name, day, strokes,
                   (yield from _blocks(identity, day, strokes, day, told=tuple(s.location for s in added))))
    cites = tuple(dict.fromkeys(((revision,) if revision else ()) + tuple(c for s in strokes for c in s.cites)))
    written = yield from write_rated(stream, identity.name, plan.summary(), now,
                                     {"plan": plan.to_dict(), "identity": identity.model_dump()}, cites)
    plan.memory_id = written.id
    return plan


def plan_day(stream: MemoryStream, identity: Identity, day: datetime, *, chat: ChatModel) -> DayPlan:
    """:func:`plan_day_stage`, answered at once by ``chat``."""
    return run_direct(plan_day_stage(stream, identity, day), chat)


def decompose_stage(stream: MemoryStream, identity: Identity, plan: DayPlan, t: datetime) -> Stage[Block]:
    """Decompose the block under way at ``t`` into 5-15 minute actions, once."""
    block = plan.block_at(t)
    if block.actions:
        return block
    read = partial(actions_answer, frame=DayFrame.of(identity, plan.strokes),
                   start=minute_of_day(f"{block.start:%H:%M}"), minutes=block.minutes,
                   activity=block.activity, location=block.location, name=identity.name,
                   places=KnownPlaces.of(identity))
    proposed = (yield Request(prompts.ACTIONS_PURPOSE, prompts.actions_messages(
        identity.describe(), identity.name, f"{block.start:%H:%M}", f"{block.end:%H:%M}", block.minutes,
        block.activity, block.location), read, salvage=partial(read, whole=False),
        remark=partial(short_of, minutes=block.minutes))) or []  # stretched (counted) or cut to fit by fit_actions
    block.actions = fit_actions(block, [(a.minutes, a.activity, a.location) for a in proposed])
    text = f"From {block.start:%H:%M} to {block.end:%H:%M}: " + "; ".join(
        f"{a.activity} ({a.minutes} min)" for a in block.actions)
    cites = (plan.memory_id,) if plan.memory_id else ()
    written = yield from write_rated(
        stream, identity.name, text, block.start,
        {"decomposition": {"plan": plan.memory_id, "block_start": block.start.isoformat(),
                           "actions": [{"start": a.start.isoformat(), "minutes": a.minutes, "activity": a.activity,
                                        "location": a.location} for a in block.actions]}}, cites)
    block.importance = written.importance
    return block


def decompose(stream: MemoryStream, identity: Identity, plan: DayPlan, t: datetime, *,
              chat: ChatModel) -> Block:
    """:func:`decompose_stage`, answered at once."""
    return run_direct(decompose_stage(stream, identity, plan, t), chat)


@dataclass
class ReactDecision:
    react: bool
    reaction: str
    plan: DayPlan


def current_plan(stream: MemoryStream, owner: str, at: datetime) -> tuple[DayPlan, Identity]:
    """The latest plan for the day of ``at`` (with its decompositions), read back from the stream."""
    day = start_of_day(at)
    plan, identity, decompositions = None, None, []
    for m in reversed(stream.memories(owner)):
        if m.kind != PLAN:
            continue
        if "decomposition" in m.metadata:
            decompositions.append(m.metadata["decomposition"])
        elif "plan" in m.metadata and datetime.fromisoformat(m.metadata["plan"]["day"]) == day:
            plan = DayPlan.from_dict(m.metadata["plan"])
            plan.memory_id = m.id  # the memory that holds it (its metadata was written before it had an id)
            identity = Identity.model_validate(m.metadata["identity"])
            break
    if plan is None or identity is None:
        raise MemstreamError(f"{owner} has no plan for {day.date()}; make one with plan_day or `memstream plan`")
    for d in reversed(decompositions):  # oldest first, so a later decomposition wins
        if d["plan"] != plan.memory_id:
            continue
        start = datetime.fromisoformat(d["block_start"])
        for block in plan.blocks:
            if block.start == start:
                block.actions = fit_actions(block, [(a["minutes"], a["activity"], a["location"]) for a in d["actions"]])
    return plan, identity


def react_stage(stream: MemoryStream, plan: DayPlan, identity: Identity, observation: str,
                now: datetime, *, evidence: tuple[int, ...] = ()) -> Stage[ReactDecision]:
    """Decide whether ``observation`` changes ``plan``; if it does, replan the rest of the day from ``now``.

    A reaction for later today (with a time) becomes an appointment in the plan, citing ``evidence``
    (the memories the observation rests on, such as a planning thought after a conversation).
    """
    now = require_aware(now, "now").replace(second=0, microsecond=0)  # plans are kept to the minute
    action = plan.action_at(now) or plan.block_at(now)
    memories = "\n".join(f"- {one_line(r.memory.text)}"
                         for r in stream.retrieve(identity.name, observation, now=now, k=5))
    places = KnownPlaces.of(identity)
    here = next(iter(places.matches(action.location)), action.location) if places else action.location
    decision = yield Request(prompts.REACT_PURPOSE, prompts.react_messages(
        identity.describe(), identity.name, f"{now:%H:%M}", f"{now:%A %d %B %Y}", action.activity, observation,
        memories), partial(reaction_answer, observation=observation, here=here, name=identity.name, places=places))
    if decision is None or not decision.react:
        return ReactDecision(False, "", plan)
    later = decision.time if decision.time and minute_of_day(decision.time) > now.hour * 60 + now.minute else ""
    drop = decision.drop if any(s.appointment and s.time == decision.drop and s.time != later
                                and minute_of_day(s.time) > now.hour * 60 + now.minute for s in plan.strokes) else ""
    if not drop and later and any(s.time == later and s.activity == decision.reaction for s in plan.strokes):
        return ReactDecision(False, "", plan)  # the plan holds this appointment already
    if decision.drop and not drop and not later:
        return ReactDecision(False, "", plan)  # nothing of the plan to call off
    if drop:  # the appointment it moves or calls off goes; the hours it held follow the other strokes
        plan = DayPlan(plan.owner, plan.day, [s for s in plan.strokes if s.time != drop], plan.blocks, plan.memory_id)
    new = yield from replan_stage(stream, plan, identity, observation, decision.reaction, now, at=later,
                                  location=decision.location, minutes=decision.minutes, evidence=evidence,
                                  keep_current=bool(drop and not later))
    return ReactDecision(True, decision.reaction + (f" at {later}" if later else ""), new)


def react(stream: MemoryStream, owner: str, observation: str, now: datetime, *,
          chat: ChatModel) -> ReactDecision:
    """:func:`react_stage` on the owner's current plan (read back from the stream), answered at once."""
    plan, identity = current_plan(stream, owner, require_aware(now, "now"))
    return run_direct(react_stage(stream, plan, identity, observation, now), chat)


def replan_stage(stream: MemoryStream, plan: DayPlan, identity: Identity, observation: str, reaction: str,
                 now: datetime, *, at: str = "", location: str = "", minutes: int | None = None,
                 evidence: tuple[int, ...] = (), keep_current: bool = False) -> Stage[DayPlan]:
    """The rest of the day from ``now`` planned again around ``reaction``; the past stays as it was.

    With ``at`` (a later time today) the reaction is an appointment then, at ``location``, for
    ``minutes`` (else until the next stroke); without, it starts now (unless ``keep_current``: an
    appointment called off, the day goes on as planned). Written as a new plan memory citing the plan
    it supersedes (the stream is append-only).
    """
    now = require_aware(now, "now").replace(second=0, microsecond=0)
    kept = []
    for block in plan.blocks:
        if block.end <= now:
            kept.append(block)
        elif block.start < now:  # the block under way: its past part stays as it was
            past = int((now - block.start).total_seconds() // 60)
            if past > 0:
                done = [a for a in block.actions if a.start < now]
                if done and done[-1].end > now:  # the action under way ends now
                    done[-1] = Action(done[-1].start, int((now - done[-1].start).total_seconds() // 60),
                                      done[-1].activity, done[-1].location)
                kept.append(Block(block.start, past, block.activity, block.location, done))
    supersedes = (plan.memory_id,) if plan.memory_id else ()
    strokes = plan.strokes
    if at:
        where = location or plan.block_at(now).location
        strokes = sorted([s for s in strokes if s.time != at] + [Stroke(at, reaction, where, minutes,
                                                                        evidence or supersedes)],
                         key=lambda s: s.time)
    extra = f"\nAt {now:%H:%M} {identity.name} reacts to '{observation}': {reaction}" + (f" at {at}" if at else "")
    begins = minute_of_day(at) if at else now.hour * 60 + now.minute
    reacting = Anchor(begins, begins + (minutes or 60), reaction, timed_words(reaction))
    fresh = yield from _blocks(identity, plan.day, strokes, now, extra, (reacting,) if reacting.words else ())
    if fresh and reaction and not at and not keep_current:
        fresh[0].activity = reaction
    new = DayPlan(identity.name, plan.day, strokes, kept + fresh)
    text = f"At {now:%H:%M} {identity.name} changed plans: {reaction}" + (f" at {at} ({where})" if at else "")
    written = yield from write_rated(stream, identity.name, text, now,
                                     {"plan": new.to_dict(), "identity": identity.model_dump(),
                                      "supersedes": plan.memory_id, "reaction_to": observation},
                                     tuple(dict.fromkeys(supersedes + evidence)))
    new.memory_id = written.id
    return new


def replan(stream: MemoryStream, plan: DayPlan, identity: Identity, observation: str, reaction: str,
           now: datetime, *, chat: ChatModel) -> DayPlan:
    """:func:`replan_stage`, answered at once."""
    return run_direct(replan_stage(stream, plan, identity, observation, reaction, now),
                      chat)
