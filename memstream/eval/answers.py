"""Answers measured: every design is given the conversation turn by turn and answers each question
from its own context, at each budget; the answers are judged and scored, and their cost counted.

Per haystack and design: the sessions are written in time order (through a design store, for every
design one can keep: :mod:`.measured`), the design consolidating at each session boundary (where the
design prescribes background work); a question is asked once
everything said before it is written. For each budget the design assembles its context at the
question's time, the answer model answers from it, and the judge reads the answer against the
gold. A context that would not fit the answer model's window with the prompt around it is
assembled for what fits instead, and counted: it is never sent over the window.

``full`` is always measured, at every budget (cut from the oldest) and at the whole window
(the full-context baseline).
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from memstream.designs import Context, load_state, save_state
from memstream.errors import MemstreamError, StructuredOutputError
from memstream.eval import prompts
from memstream.eval.conversation import sessions
from memstream.eval.datasets import Dataset, Haystack, Question
from memstream.eval.measured import MeasuredDesign, eval_store, measured_design
from memstream.eval.rows import DesignRow, Scores
from memstream.eval.scoring import evidence_reachable, evidence_verbatim, exact_match, token_f1
from memstream.models import (
    ChatModel,
    Embedder,
    Request,
    Stage,
    answer_tokens,
    count_tokens,
    parse_yes_no,
    run_direct,
)
from memstream.trust import GATE_OFF, Checker

#: The budget label of the full-context baseline: everything the answer model's window holds.
WINDOW = "window"
DEFAULT_WINDOW = 128_000


def parse_answer(text: str) -> str:
    answer = " ".join(text.split())
    if not answer:
        raise StructuredOutputError("the answer is empty")
    return answer


@dataclass
class Models:
    """Who does what: the designs' own calls (summaries, importance, reflection), the answerer, the judge."""

    design: ChatModel
    answer: ChatModel
    judge: ChatModel
    embedder: Embedder


@dataclass
class Asked:
    """One question at one budget: the context it was answered from, and what came of it."""

    question: Question
    budget: int | str
    context: Context
    assembly_s: float
    to_window: bool
    evidence_texts: list[str]
    evidence_ids: list[int]
    answer: str = ""
    correct: bool = False
    answer_s: float = 0.0  # the answer model's latency for this question (its batch's mean)


@dataclass
class Cost:
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    questions: int = 0
    turns: int = 0


@dataclass
class Results:
    asked: dict[tuple[str, int | str], list[Asked]] = field(default_factory=lambda: defaultdict(list))
    write: dict[str, Cost] = field(default_factory=lambda: defaultdict(Cost))
    kept_out: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


def evaluate_designs(dataset: Dataset, designs: Sequence[str], budgets: Sequence[int], models: Models, *,
                     window: int = DEFAULT_WINDOW, settings: Mapping[str, Mapping[str, object]] | None = None,
                     state_dir: Path | None = None, progress: bool = True,
                     gate: Callable[[], Checker] = Checker.off) -> list[DesignRow]:
    """One result row per design and budget (``full`` included, and at the whole window).

    ``gate`` makes the write gate and critic put in front of each design (``memstream.trust``; off
    by default); what they kept out is counted in each row.

    With ``state_dir``, each design's state after writing a haystack is kept in
    ``state_dir/HAYSTACK.DESIGN.json`` and read back instead of writing again on the next run
    (a file another design wrote, or written with other settings, is refused in one line).
    """
    names = list(dict.fromkeys(["full", *designs]))
    plan = [(name, b) for name in names for b in budgets] + [("full", WINDOW)]
    results = Results()
    bar = tqdm(total=len(dataset.haystacks) * len(names), desc=f"{dataset.name} designs", unit="design",
               disable=not progress, leave=False)
    with eval_store() as store:
        for n, h in enumerate(dataset.haystacks):
            for name in names:
                with measured_design(name, store, embedder=models.embedder, settings=(settings or {}).get(name, {}),
                                     scope=f"haystack {n}") as measured:
                    checker = measured.design.checker = gate()
                    measured, ids = _written(measured, h, models.design, results.write[name], state_dir, checker.name)
                    results.kept_out[name].update(checker.audit.counts)
                    results.write[name].questions += len(h.questions)
                    for b in (b for n, b in plan if n == name):
                        asked = [_assemble(measured, h, q, b, ids, window) for q in h.questions]
                        _answer(asked, models)
                        results.asked[(name, b)].extend(asked)
                bar.update()
    bar.close()
    return [_row(dataset, name, b, results.asked[(name, b)], results.write[name], models, gate().name,
                 dict(results.kept_out[name])) for name, b in plan]


def _written(measured: MeasuredDesign, h: Haystack, chat: ChatModel, cost: Cost, state_dir: Path | None,
             gate: str = GATE_OFF) -> tuple[MeasuredDesign, dict[int, int]]:
    """The haystack written into ``measured`` (or its design's state read back from ``state_dir``, then held by
    the design alone); what to ask contexts from, and the record ids."""
    if state_dir is None:
        return measured, _write(measured, h, chat, cost)
    design = measured.design
    path = state_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', h.key)}.{design.name}.json"
    source = _source(h, chat, gate)
    if not path.exists():
        ids = _write(measured, h, chat, cost)
        save_state(design, path, extra={"ids": {str(k): v for k, v in ids.items()}, "source": source})
        return measured, ids
    measured = measured.alone()
    loaded = load_state(design, path)
    if loaded.config != design.config:
        raise MemstreamError(f"{path} was written with other {design.name} settings ({loaded.config}); "
                             "remove it or use another --state folder")
    extra = loaded.extra
    if extra.get("source") != source:
        raise MemstreamError(f"{path} was written from another conversation or with another model than this "
                             f"one ({h.key!r}, {chat.name}); remove it or use another --state folder")
    return measured, {int(k): v for k, v in extra["ids"].items()}


def _source(h: Haystack, chat: ChatModel, gate: str = GATE_OFF) -> str:
    """What a kept state was made from: the conversation's turns and times, and the model that rated and
    summarised them (a state reused for other data would give silently wrong scores)."""
    turns = [(m.text, m.created_at.isoformat()) for m in h.memories]
    made = [h.key, chat.name, turns] + ([] if gate == GATE_OFF else [gate])  # a gated state differs
    return hashlib.sha256(json.dumps(made).encode()).hexdigest()[:16]


def _write(measured: MeasuredDesign, h: Haystack, chat: ChatModel, cost: Cost) -> dict[int, int]:
    """Write the haystack into ``measured`` session by session (one write each), consolidating at each
    boundary; the record id of each haystack memory. (Questions here are all asked after the last turn, as
    both benchmarks ask.)"""
    before = _spent(chat)
    started = time.perf_counter()
    ids: dict[int, int] = {}
    for session in sessions(h):
        written = run_direct(measured.remember_stage(h.key, session.entries), chat)
        ids.update((p, i) for p, i in zip(session.positions, written, strict=True) if i is not None)
        cost.turns += len(session.entries)
        run_direct(measured.consolidate_stage(h.key, session.entries[-1].at), chat)
    cost.seconds += time.perf_counter() - started
    calls, tokens = (a - b for a, b in zip(_spent(chat), before, strict=True))
    cost.calls += calls
    cost.tokens += tokens
    return ids


def _spent(chat: ChatModel) -> tuple[int, int]:
    u = chat.usage.by_purpose.values()
    return sum(p.calls for p in u), sum(p.prompt_tokens + p.completion_tokens for p in u)


def _assemble(measured: MeasuredDesign, h: Haystack, q: Question, budget: int | str, ids: dict[int, int],
              window: int) -> Asked:
    overhead = sum(count_tokens(m["content"]) for m in prompts.answer_messages("", q.text, q.asked_at))
    room = window - overhead - answer_tokens(prompts.ANSWER_PURPOSE)  # the answer's own room kept free
    if room <= 0:
        raise MemstreamError(f"--window {window} leaves no room for a context around the question {q.qid}")
    wanted = room if budget == WINDOW else int(budget)
    started = time.perf_counter()
    context = measured.context(h.key, q.text, q.asked_at, min(wanted, room))
    elapsed = time.perf_counter() - started
    assert context.tokens <= min(wanted, room), f"{measured.name} assembled {context.tokens} > {min(wanted, room)}"
    evidence = sorted(q.evidence)
    return Asked(q, budget, context, elapsed, budget != WINDOW and wanted > room,
                 [h.memories[i].text for i in evidence], [ids[i] for i in evidence if i in ids])


def _answer(asked: list[Asked], models: Models) -> None:
    """Answer every question from its context in one batch, then judge every answer in one batch."""
    if not asked:
        return
    problems: list[str] = []
    before = _answer_usage(models.answer)
    answers = run_direct(_ask([Request(prompts.ANSWER_PURPOSE, prompts.answer_messages(a.context.text,
                                       a.question.text, a.question.asked_at), parse_answer) for a in asked]),
                         models.answer, problems)
    _refuse_lost(problems, "answer", models.answer)
    latency, calls = (x - y for x, y in zip(_answer_usage(models.answer), before, strict=True))
    for a, text in zip(asked, answers, strict=True):
        a.answer = text
        a.answer_s = latency / calls if calls else 0.0
    verdicts = run_direct(_ask([Request(prompts.JUDGE_PURPOSE, prompts.judge_messages(
        a.question.category, a.question.text, a.question.answer, a.answer, abstention=a.question.abstention),
        parse_yes_no) for a in asked]), models.judge, problems)
    _refuse_lost(problems, "judge", models.judge)
    for a, verdict in zip(asked, verdicts, strict=True):
        a.correct = bool(verdict)


def _ask(requests: list[Request]) -> Stage[list[Any]]:
    """A stage of one batch: ``requests`` asked together, their parsed answers returned."""
    return (yield requests)


def _refuse_lost(problems: list[str], role: str, chat: ChatModel) -> None:
    if problems:
        raise MemstreamError(f"the {role} model ({chat.name}) gave no usable answer: {problems[0]}; answers had so "
                             "far are kept in the call cache, so running the command again goes on from there")


def _row(dataset: Dataset, name: str, budget: int | str, asked: list[Asked], write: Cost,
         models: Models, gate: str, gate_counts: dict[str, int]) -> DesignRow:
    n = len(asked)
    per_question = max(write.questions, 1)
    by_type: dict[str, list[Asked]] = defaultdict(list)
    for a in asked:
        by_type[a.question.category].append(a)
    return {
        "dataset": dataset.name, "design": name, "budget": budget, "n": n,
        "answer_model": models.answer.name, "judge": models.judge.name, "embedder": models.embedder.name,
        **_scores(asked),
        "context_tokens": _mean(a.context.tokens for a in asked),
        "context_tokens_by_tier": _tiers(asked),
        "cut_per_question": _mean(a.context.cut for a in asked),
        "cut_to_window": sum(a.to_window for a in asked),
        "assembly_ms": _mean(a.assembly_s * 1000 for a in asked),
        "assembly_ms_p95": _quantile([a.assembly_s * 1000 for a in asked], 0.95),
        "write_calls_per_question": round(write.calls / per_question, 3),
        "write_tokens_per_question": round(write.tokens / per_question, 1),
        "write_calls_per_turn": round(write.calls / max(write.turns, 1), 3),
        "write_tokens_per_turn": round(write.tokens / max(write.turns, 1), 1),
        "write_seconds": round(write.seconds, 2),
        "answer_latency_s": _mean(a.answer_s for a in asked),
        "per_category": {c: {"n": len(xs), **_scores(xs)} for c, xs in sorted(by_type.items())},
        "skipped": dict(dataset.skipped),
        "gate": gate, "gate_counts": gate_counts,
    }


def _scores(asked: list[Asked]) -> Scores:
    with_evidence = [a for a in asked if a.evidence_ids]
    return {
        "judge_accuracy": _mean(float(a.correct) for a in asked),
        "f1": _mean(token_f1(a.answer, a.question.answer) for a in asked if not a.question.abstention),
        "exact_match": _mean(exact_match(a.answer, a.question.answer) for a in asked if not a.question.abstention),
        "evidence_verbatim": _mean(evidence_verbatim(a.context.text, a.evidence_texts) for a in with_evidence),
        "evidence_reachable": _mean(evidence_reachable(a.context.ids, a.evidence_ids) for a in with_evidence),
        "n_evidence": len(with_evidence),
    }


def _tiers(asked: list[Asked]) -> dict[str, float]:
    totals: dict[str, int] = defaultdict(int)
    for a in asked:
        for tier, tokens in a.context.tokens_by_tier().items():
            totals[tier] += tokens
    return {tier: round(t / max(len(asked), 1), 1) for tier, t in sorted(totals.items())}


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(statistics.fmean(values), 4) if values else 0.0


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _answer_usage(chat: ChatModel) -> tuple[float, int]:
    usage = chat.usage.by_purpose.get(prompts.ANSWER_PURPOSE)
    return (usage.latency_s, usage.calls) if usage else (0.0, 0)
