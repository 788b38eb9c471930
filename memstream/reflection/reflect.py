"""Reflection: when enough has happened, an agent asks itself questions and writes cited insights.

As in the paper: the summed importance of observations perceived since the last
reflection crosses a threshold (150); the agent takes its 100 most recent
memories, asks for the 3 most salient high-level questions, retrieves memories
for each, and asks for 5 insights, each citing the numbered statements it rests
on. Citations are real: every number maps to a memory id, and an insight with
missing or out-of-range citations is dropped and counted, never written with
invented evidence. The sense checks (:mod:`memstream.reflection.sense`) refuse
questions all about one object, and drop insights that restate one cited statement
or share nothing with what they cite, counted by check in
``ReflectionResult.dropped_by_check``. Insights become ``reflection`` memories that cite their
evidence, with depth = 1 + the deepest memory cited (observations are depth 0),
so later reflections can cite earlier ones and form trees.

With a checker (``memstream.trust``), each insight passes the write gate and the critic (is it
supported by the memories it cites? does it or its evidence carry an instruction?) before it is
written; a rejected one is dropped, audited by the checker and listed in ``dropped``. An insight
cannot cite a text the gate blocked: a blocked text is never written, so it has no id to cite.

The trigger's state lives in the stream (:meth:`MemoryStream.reflected_through`: the id
through which the owner last reflected), so it survives a reopen.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from memstream.models import ChatModel, Request, Stage, run_direct
from memstream.reflection import prompts, sense
from memstream.reflection.parse import Insight, parse_insights, parse_questions
from memstream.stream import DIALOGUE, OBSERVATION, REFLECTION, Memory, MemoryStream, importance_stage, new_memory
from memstream.trust import Checker

THRESHOLD = 150
RECENT = 100
#: Memories retrieved per question (the reference implementation retrieves 30).
EVIDENCE_K = 30
TRIGGER_KINDS: tuple[str, ...] = (OBSERVATION, DIALOGUE)  # what the agent perceived and heard


@dataclass
class WrittenInsight:
    memory_id: int
    text: str
    cites: list[int]
    depth: int
    question: str


@dataclass
class DroppedInsight:
    question: str
    text: str
    reason: str
    check: str = ""  # which check dropped it: a ``sense`` check's name, "repeat" or "critic"


@dataclass
class ReflectionResult:
    owner: str
    at: datetime
    questions: list[str] = field(default_factory=list)
    insights: list[WrittenInsight] = field(default_factory=list)
    dropped: list[DroppedInsight] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # answers that could not be read, with why

    def dropped_by_check(self) -> dict[str, int]:
        """How many insights each check dropped (restatements, unsupported, bad citations, repeats, critic)."""
        return dict(Counter(d.check for d in self.dropped))

    def to_dict(self) -> dict:
        return {"owner": self.owner, "at": self.at.isoformat(), "questions": self.questions,
                "insights": [vars(i) for i in self.insights], "dropped": [vars(d) for d in self.dropped],
                "dropped_by_check": self.dropped_by_check(), "skipped": self.skipped}


def accumulated_importance(stream: MemoryStream, owner: str) -> int:
    """Importance of the owner's observations since its last reflection."""
    return stream.importance_since(owner, TRIGGER_KINDS, stream.reflected_through(owner))


def maybe_reflect_stage(stream: MemoryStream, owner: str, now: datetime, threshold: int = THRESHOLD, *,
                        checker: Checker | None = None) -> Stage[ReflectionResult | None]:
    """Reflect if the trigger has fired; otherwise None (and no request)."""
    if accumulated_importance(stream, owner) < threshold:
        return None
    return (yield from reflect_stage(stream, owner, now, checker=checker))


def maybe_reflect(stream: MemoryStream, owner: str, now: datetime, *, chat: ChatModel,
                  threshold: int = THRESHOLD) -> ReflectionResult | None:
    """:func:`maybe_reflect_stage`, answered at once by ``chat``."""
    return run_direct(maybe_reflect_stage(stream, owner, now, threshold), chat)


def _depth(memory: Memory) -> int:
    return int(memory.metadata.get("depth", 0))


def reflect_stage(stream: MemoryStream, owner: str, now: datetime, evidence_k: int = EVIDENCE_K, *,
                  checker: Checker | None = None) -> Stage[ReflectionResult]:
    """One reflection for ``owner`` at simulated time ``now``: questions, then every question's insights
    asked together, then their importance; the insights are written with their citations."""
    result = ReflectionResult(owner, now)
    recent = stream.recent(owner, RECENT)
    through = stream.last_id(owner)
    texts = [m.text for m in recent]
    asked = Request(prompts.QUESTIONS_PURPOSE, prompts.questions_messages(owner, texts),
                    lambda answer: sense.check_questions(parse_questions(answer), texts))
    result.questions = ((yield asked) or [])[: prompts.N_QUESTIONS]
    _note_problem(result, asked)
    evidence = {q: [r.memory for r in stream.retrieve(owner, q, now=now, k=evidence_k)] for q in result.questions}
    requests = [_insights_request(owner, [m.text for m in evidence[q]]) for q in result.questions]
    answers = (yield requests) if requests else []
    pending: list[tuple[Insight, list[Memory], str]] = []
    seen: set[str] = set()
    for question, request, checked in zip(result.questions, requests, answers, strict=True):
        _note_problem(result, request)
        checked = checked or sense.CheckedInsights()
        for insight, check, reason in checked.refused:
            result.dropped.append(DroppedInsight(question, insight.insight, reason, check))
        for insight in checked.kept:
            if insight.insight.strip().lower() in seen:
                result.dropped.append(DroppedInsight(question, insight.insight,
                                                     "repeats an insight of this reflection", "repeat"))
            else:
                cited = [evidence[question][n - 1] for n in dict.fromkeys(insight.because)]
                pending.append((insight, cited, question))
                seen.add(insight.insight.strip().lower())
    if pending and checker is not None:
        pending = yield from _checked(checker, owner, now, pending, result)
    if pending:
        ratings = yield from importance_stage([i.insight for i, _, _ in pending])
        for (insight, cited, question), importance in zip(pending, ratings, strict=True):
            depth = 1 + max(_depth(m) for m in cited)
            item = new_memory(owner=owner, text=insight.insight, kind=REFLECTION, created_at=now,
                              importance=importance, cites=tuple(m.id for m in cited),
                              metadata={"depth": depth, "question": question, "prompt_version": prompts.VERSION})
            result.insights.append(WrittenInsight(stream.write(item), item.text, list(item.cites), depth, question))
    stream.mark_reflected(owner, through)
    return result


def reflect(stream: MemoryStream, owner: str, now: datetime, *, chat: ChatModel,
            evidence_k: int = EVIDENCE_K, checker: Checker | None = None) -> ReflectionResult:
    """:func:`reflect_stage`, answered at once by ``chat``."""
    return run_direct(reflect_stage(stream, owner, now, evidence_k, checker=checker), chat)


def _checked(checker: Checker, owner: str, now: datetime, pending: list[tuple[Insight, list[Memory], str]],
             result: ReflectionResult) -> Stage[list[tuple[Insight, list[Memory], str]]]:
    """The pending insights the gate and the critic allow; the others dropped with the reason."""
    verdicts = yield from checker.consolidation_stage(
        owner, [i.insight for i, _, _ in pending], [[m.text for m in cited] for _, cited, _ in pending],
        what="insight", source=f"{prompts.INSIGHTS_PURPOSE} citing memories", at=now.isoformat())
    kept = []
    for (insight, cited, question), verdict in zip(pending, verdicts, strict=True):
        if verdict.allowed:
            kept.append((insight, cited, question))
        else:
            check = "the check could not run" if verdict.failed else f"rejected ({verdict.by}): {verdict.reason}"
            result.dropped.append(DroppedInsight(question, insight.insight, check, "critic"))
    return kept


def _note_problem(result: ReflectionResult, request: Request) -> None:
    if request.problem:
        result.skipped.append(request.problem)


def _insights_request(owner: str, statements: list[str]) -> Request[sense.CheckedInsights]:
    """The insights request over ``statements``: its answer read, then judged insight by insight against them."""
    return Request(prompts.INSIGHTS_PURPOSE, prompts.insights_messages(owner, statements),
                   lambda answer: sense.check_insights(parse_insights(answer)[: prompts.N_INSIGHTS], statements))
