"""Scenario evals: each design lives through a scenario turn by turn; what it keeps is checked after
every turn, and questions are answered from it and judged (the format: ``docs/scenarios.md``).

Per scenario and design, a fresh design is given each turn's entries (the user's text, each tool
call with its result, the reply) in order, and consolidates at the end of each session. After
every turn, each fact memory should hold by then is looked for, model-free, in the context the
design assembles for the fact's probe at the budget: the turn where a found fact stops being found
is where it was lost. A question is answered from the design's context at the budget and, after a
turn, from that session's history (reset between sessions: only memory carries over); the judge
reads the criterion, the answer and the context. The design's own model calls, tokens and seconds
are counted per turn, with what the design counts of its upkeep (``MemoryDesign.counters``). Each
design gets its own cache in front of the embedder, so it pays for embedding its own turns (its
seconds are its own, whichever design ran first), while a probe asked turn after turn is embedded
once; the embedder is loaded before anything is timed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tqdm import tqdm

from memstream.designs import COMPACTIONS, DROPPED_EDITS, Entry, MemoryDesign, entry
from memstream.eval import criteria, prompts
from memstream.eval.answers import Models, _ask, _refuse_lost, _spent, parse_answer
from memstream.eval.measured import MeasuredDesign, eval_store, measured_design
from memstream.eval.rows import Passed, ScenarioRow, TurnCheck
from memstream.eval.scenario import CORRUPTIBLE, DEPENDENT, Fact, Question, Scenario, Turn
from memstream.models import CachedEmbedder, ChatModel, Request, parse_yes_no, run_direct

#: The default context budget in tokens: about 4,000 characters, half the 8,000-character cap of
#: the always-loaded profile files this eval was built to compare.
DEFAULT_BUDGET = 1000
#: Questions sent to the answer model (and the judge) at once: a bar moves between batches.
BATCH = 8


@dataclass
class Tracked:
    """A fact through the run: when it was stated, found first, lost first, expired; found now."""

    fact: Fact
    stated: str
    found_first: str | None = None
    lost_at: str | None = None
    expired: str | None = None
    found: bool = False


@dataclass
class Posed:
    """A question as it was put: where, the context it was answered from, and what came of it."""

    question: Question
    session: str
    after: str | None  # the turn it followed; None when asked as the session opened
    at: datetime
    memory: str
    tokens: int
    history: list[str]
    answer: str = ""
    passed: bool = False


@dataclass
class Run:
    facts: dict[str, Tracked] = field(default_factory=dict)
    turns: list[TurnCheck] = field(default_factory=list)
    posed: list[Posed] = field(default_factory=list)
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0


def evaluate_scenarios(scenarios: Sequence[Scenario], designs: Sequence[str], budget: int, models: Models, *,
                       settings: Mapping[str, Mapping[str, object]] | None = None,
                       progress: bool = True) -> list[ScenarioRow]:
    """One result row per scenario and design, in that order (``models.embedder`` uncached: each design
    is given its own cache)."""
    rows = []
    models.embedder.embed(["a sentence to load the embedder before anything is timed"])
    total = sum(len(x.turns) for s in scenarios for x in s.sessions) * len(designs)
    with tqdm(total=total, desc="scenarios", unit="turn", disable=not progress, leave=False) as bar, \
            eval_store() as store:
        for n, scenario in enumerate(scenarios):
            for name in designs:
                bar.set_postfix_str(f"{scenario.name} / {name}")
                with measured_design(name, store, embedder=CachedEmbedder(models.embedder),
                                     settings=(settings or {}).get(name, {}), scope=f"scenario {n}") as design:
                    run = _live(scenario, design, budget, models, bar)
                    _answer(run.posed, models, progress)
                    rows.append(_row(scenario, design.design, budget, run, models))
    return rows


def _live(scenario: Scenario, design: MeasuredDesign, budget: int, models: Models, bar: tqdm) -> Run:
    """The scenario written into ``design`` turn by turn, its facts checked and its questions posed."""
    run = Run()
    owner = scenario.owner
    for session in scenario.sessions:
        history: list[str] = []
        run.posed += [_pose(design, owner, q, session.id, None, session.at, budget, history)
                      for q in session.questions]
        for i, (turn, at) in enumerate(zip(session.turns, session.times(), strict=True)):
            entries = _entries(turn, at, session.id)
            last = i == len(session.turns) - 1
            _spend(run, design, owner, entries, at if last else None, models, ready=(turn.user, budget))
            history += [e.text for e in entries]
            for gone in turn.expire:
                run.facts[gone].expired = turn.id
            run.facts.update((f.id, Tracked(f, turn.id)) for f in turn.remember)
            run.turns.append(_check(design, owner, run.facts, turn.id, session.id, at, budget))
            run.posed += [_pose(design, owner, q, session.id, turn.id, at, budget, history) for q in turn.ask]
            bar.update()
    return run


def _entries(turn: Turn, at: datetime, session: str) -> list[Entry]:
    """What a design is given of a turn, as the conversation shows it: who spoke or which tool answered."""
    made = [entry(text=f"User: {turn.user}", at=at, source="user", kind="turn", session=session)]
    made += [entry(text=f"Tool {t.name}({json.dumps(t.args, ensure_ascii=False, default=str)}): {t.result}", at=at,
                   source=t.name, kind="tool", session=session) for t in turn.tools]
    if turn.assistant:
        made.append(entry(text=f"Assistant: {turn.assistant}", at=at, source="assistant", kind="turn",
                          session=session))
    # each its own entry, even one saying what another said (a tool called twice alike): not a write retried
    return [e.model_copy(update={"id": f"{turn.id}/{k}"}) for k, e in enumerate(made)]


def _spend(run: Run, design: MeasuredDesign, owner: str, entries: list[Entry], consolidate_at: datetime | None,
           models: Models, *, ready: tuple[str, int]) -> None:
    """Write a turn (and consolidate, at a session's end), counting the design's model calls and time until
    its memory is ready: one read for the turn's text (``ready``) is timed too, so a design that defers work
    to its next read (the stream's write buffer embeds then) pays for it here, not in the checks."""
    before = _spent(models.design)
    started = time.perf_counter()
    run_direct(design.remember_stage(owner, entries), models.design)
    if consolidate_at is not None:
        run_direct(design.consolidate_stage(owner, consolidate_at), models.design)
    design.context(owner, ready[0], entries[-1].at, ready[1])
    run.seconds += time.perf_counter() - started
    calls, tokens = (a - b for a, b in zip(_spent(models.design), before, strict=True))
    run.calls += calls
    run.tokens += tokens


def _check(design: MeasuredDesign, owner: str, facts: dict[str, Tracked], turn: str, session: str, at: datetime,
           budget: int) -> TurnCheck:
    """Each live fact looked for in the context for its probe; this turn's line of the matched table."""
    live = [t for t in facts.values() if t.expired is None]
    lost: list[str] = []
    missing: list[str] = []
    for t in live:
        found = criteria.holds(design.context(owner, t.fact.probe, at, budget).text, t.fact.require, t.fact.forbid)
        if found and t.found_first is None:
            t.found_first = turn
        if t.found and not found and t.lost_at is None:
            t.lost_at = turn
            lost.append(t.fact.id)
        if not found:
            missing.append(t.fact.id)
        t.found = found
    return TurnCheck(turn=turn, session=session, live=len(live), matched=len(live) - len(missing), lost=lost,
                     missing=missing)


def _pose(design: MeasuredDesign, owner: str, q: Question, session: str, after: str | None, at: datetime,
          budget: int, history: list[str]) -> Posed:
    context = design.context(owner, q.ask, at, budget)
    return Posed(q, session, after, at, context.text, context.tokens, list(history))


def _answer(posed: list[Posed], models: Models, progress: bool) -> None:
    """Every question answered, then every answer judged, in batches of ``BATCH`` (a bar counts them)."""
    answers = _batched([Request(prompts.SCENARIO_ANSWER_PURPOSE, prompts.scenario_answer_messages(
        p.memory, p.history, p.question.ask, p.at), parse_answer) for p in posed], models.answer, "answer", progress)
    for p, text in zip(posed, answers, strict=True):
        p.answer = text
    verdicts = _batched([Request(prompts.SCENARIO_JUDGE_PURPOSE, prompts.scenario_judge_messages(
        p.question.ask, p.question.criterion, criteria.render(p.question.require), criteria.render(p.question.forbid),
        p.answer, p.memory), parse_yes_no) for p in posed], models.judge, "judge", progress)
    for p, verdict in zip(posed, verdicts, strict=True):
        p.passed = bool(verdict)


def _batched(requests: list[Request], chat: ChatModel, role: str, progress: bool) -> list[Any]:
    """The requests' answers, ``BATCH`` at a time; a lost answer stops the run in one line."""
    out: list[Any] = []
    problems: list[str] = []
    with tqdm(total=len(requests), desc=role, unit="question", leave=False,
              disable=not progress or chat.name.startswith("offline")) as bar:
        for start in range(0, len(requests), BATCH):
            chunk = requests[start:start + BATCH]
            out += run_direct(_ask(chunk), chat, problems)
            _refuse_lost(problems, role, chat)
            bar.update(len(chunk))
    return out


def _row(scenario: Scenario, design: MemoryDesign, budget: int, run: Run, models: Models) -> ScenarioRow:
    turns = max(len(run.turns), 1)
    checks = sum(t["live"] for t in run.turns)
    end = [t for t in run.facts.values() if t.expired is None]
    counted = design.counters()
    return {
        "scenario": scenario.name, "design": design.name, "budget": budget, "turns": len(run.turns),
        "facts": len(run.facts), "answer_model": models.answer.name, "judge": models.judge.name,
        "embedder": models.embedder.name,
        "matched": round(sum(t["matched"] for t in run.turns) / checks, 4) if checks else 0.0,
        "matched_at_end": round(sum(t.found for t in end) / len(end), 4) if end else 0.0,
        "lost": sum(t.lost_at is not None for t in run.facts.values()),
        "memory_dependent": _passed(run.posed, DEPENDENT),
        "memory_corruptible": _passed(run.posed, CORRUPTIBLE),
        "cost_per_turn": {"calls": round(run.calls / turns, 3), "tokens": round(run.tokens / turns, 1),
                          "seconds": round(run.seconds / turns, 4)},
        "context_tokens": round(sum(p.tokens for p in run.posed) / max(len(run.posed), 1), 1),
        "compactions": counted.get(COMPACTIONS), "dropped_edits": counted.get(DROPPED_EDITS), "counters": counted,
        "per_turn": run.turns,
        "per_fact": [{"fact": t.fact.id, "stated": t.stated, "found_first": t.found_first, "lost_at": t.lost_at,
                      "expired": t.expired, "found_at_end": t.found if t.expired is None else None}
                     for t in run.facts.values()],
        "questions": [{"id": p.question.id, "kind": p.question.kind, "session": p.session, "after": p.after,
                       "answer": p.answer, "passed": p.passed, "context_tokens": p.tokens} for p in run.posed],
    }


def _passed(posed: list[Posed], kind: str) -> Passed:
    mine = [p for p in posed if p.question.kind == kind]
    passed = sum(p.passed for p in mine)
    return {"n": len(mine), "passed": passed, "share": round(passed / len(mine), 4) if mine else 0.0}
