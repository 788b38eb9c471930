"""Reflection: when enough has happened, an agent asks itself questions and writes cited insights.

As in the paper: the summed importance of observations perceived since the last
reflection crosses a threshold (150); the agent takes its 100 most recent
memories, asks for the 3 most salient high-level questions, retrieves memories
for each, and asks for 5 insights, each citing the numbered statements it rests
on. Citations are real: every number maps to a memory id, and an insight with
missing or out-of-range citations is dropped and counted, never written with
invented evidence. Insights become ``reflection`` memories that cite their
evidence, with depth = 1 + the deepest memory cited (observations are depth 0),
so later reflections can cite earlier ones and form trees.

The trigger's state lives in the stream file (the id through which the owner
last reflected), so it survives a reopen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memstream.models.ask import ask
from memstream.models.base import ChatModel
from memstream.reflection import prompts
from memstream.reflection.parse import Insight, parse_insights, parse_questions
from memstream.stream import OBSERVATION, REFLECTION, Memory, MemoryStream, new_memory, rate_importance

THRESHOLD = 150
RECENT = 100
#: Memories retrieved per question (the reference implementation retrieves 30).
EVIDENCE_K = 30
TRIGGER_KINDS: tuple[str, ...] = (OBSERVATION,)


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


@dataclass
class ReflectionResult:
    owner: str
    at: datetime
    questions: list[str] = field(default_factory=list)
    insights: list[WrittenInsight] = field(default_factory=list)
    dropped: list[DroppedInsight] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # answers that could not be read, with why

    def to_dict(self) -> dict:
        return {"owner": self.owner, "at": self.at.isoformat(), "questions": self.questions,
                "insights": [vars(i) for i in self.insights], "dropped": [vars(d) for d in self.dropped],
                "skipped": self.skipped}


def _trigger_key(owner: str) -> str:
    return f"reflection.through.{owner}"


def accumulated_importance(stream: MemoryStream, owner: str) -> int:
    """Importance of the owner's observations since its last reflection."""
    through = int(stream.store.get_meta(_trigger_key(owner)) or 0)
    return stream.store.importance_since(owner, TRIGGER_KINDS, through)


def maybe_reflect(stream: MemoryStream, owner: str, now: datetime, *, chat: ChatModel | None = None,
                  threshold: int = THRESHOLD) -> ReflectionResult | None:
    """Reflect if the trigger has fired; otherwise None."""
    if accumulated_importance(stream, owner) < threshold:
        return None
    return reflect(stream, owner, now, chat=chat)


def _depth(memory: Memory) -> int:
    return int(memory.metadata.get("depth", 0))


def reflect(stream: MemoryStream, owner: str, now: datetime, *, chat: ChatModel | None = None,
            evidence_k: int = EVIDENCE_K) -> ReflectionResult:
    """Run one reflection for ``owner`` at simulated time ``now`` and write its insights."""
    chat = chat or stream.chat
    if chat is None:
        raise ValueError("reflection needs a chat model (MemoryStream(chat=...) or chat=...)")
    result = ReflectionResult(owner, now)
    recent = stream.recent(owner, RECENT)
    through = stream.store.last_id(owner)
    questions = ask(chat, prompts.questions_messages([m.text for m in recent]), parse_questions,
                     prompts.QUESTIONS_PURPOSE, result.skipped) or []
    result.questions = questions[: prompts.N_QUESTIONS]
    pending: list[tuple[Insight, list[Memory], str]] = []
    seen: set[str] = set()
    for question in result.questions:
        evidence = [r.memory for r in stream.retrieve(owner, question, now=now, k=evidence_k)]
        insights = ask(chat, prompts.insights_messages(owner, [m.text for m in evidence]), parse_insights,
                        prompts.INSIGHTS_PURPOSE, result.skipped) or []
        for insight in insights[: prompts.N_INSIGHTS]:
            reason = _citation_problem(insight, len(evidence))
            if not reason and insight.insight.strip().lower() in seen:
                reason = "repeats an insight of this reflection"
            if reason:
                result.dropped.append(DroppedInsight(question, insight.insight, reason))
            else:
                cited = [evidence[n - 1] for n in dict.fromkeys(insight.because)]
                pending.append((insight, cited, question))
                seen.add(insight.insight.strip().lower())
    if pending:
        ratings = rate_importance(chat, [i.insight for i, _, _ in pending])
        items = [new_memory(owner=owner, text=i.insight, kind=REFLECTION, created_at=now, importance=imp,
                            cites=tuple(m.id for m in cited),
                            metadata={"depth": 1 + max(_depth(m) for m in cited), "question": q,
                                      "prompt_version": prompts.VERSION})
                 for (i, cited, q), imp in zip(pending, ratings, strict=True)]
        for memory, (_, _, q) in zip(stream.extend(items), pending, strict=True):
            result.insights.append(WrittenInsight(memory.id, memory.text, list(memory.cites),
                                                  memory.metadata["depth"], q))
    stream.store.set_meta({_trigger_key(owner): str(through)})
    return result


def _citation_problem(insight: Insight, n_evidence: int) -> str | None:
    if not insight.insight.strip():
        return "empty insight"
    if not insight.because:
        return "no citations"
    bad = [n for n in insight.because if not 1 <= n <= n_evidence]
    if bad:
        return f"citations out of range: {bad} (statements are 1-{n_evidence})"
    return None
