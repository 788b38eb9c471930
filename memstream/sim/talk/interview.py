"""Interviews: an agent answers from its own memories, as in the paper's evaluation.

One question, a conversation (earlier questions and answers in the prompt), or a battery of
templated questions in categories (the bundled one follows the paper's five). The agent is shown
its recent day and the memories retrieved on the question. Every answer comes with the ids of the
memories it was shown, so a reader can check it against the stream, and is flagged when it repeats
the agent's answer to another question; a judge model can score answers, and an agent can be asked
whether it knows of something (from what is retrieved on it: the rest of the day would only invite
a yes the memories do not hold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import NotRequired, TypedDict, cast

from memstream.errors import MemstreamError
from memstream.files import read_data
from memstream.models import Request, Stage, concurrently
from memstream.sim.talk import prompts
from memstream.sim.talk.parse import Judgement, Knows, parse_answer, parse_judgement, parse_knows
from memstream.sim.talk.recent import day_began, recent_day
from memstream.sim.talk.repeats import flag_repeats
from memstream.sim.town.world import Resident
from memstream.stream import Memory, MemoryStream, Weights

BUNDLED_BATTERY = Path(__file__).parents[1] / "data" / "battery.yaml"
#: Lines of the recent day an interview shows beside the memories retrieved on the question.
RECENT_DAY_LINES = 10
#: The fields a battery question may name.
FIELDS = ("name", "first", "occupation", "workplace", "other")


def interview_stage(stream: MemoryStream, resident: Resident, question: str, now: datetime, *, k: int = 10,
                    weights: Weights | None = None, history: Sequence[tuple[str, str]] = (),
                    day: int = RECENT_DAY_LINES) -> Stage[tuple[str | None, list[Memory]]]:
    """The agent's answer (None if the model gave none) and the memories it was shown: its recent day (at most
    ``day``, :mod:`memstream.sim.talk.recent`), then the ``k`` retrieved on the question, not shown twice.

    The paper's interview retrieves on the question; a question about the day ("what did you do this
    morning?") shares few words with what happened in it, and a small model then answered from the identity
    alone. Retrieval does not touch the memories: an interview observes the agent, it does not change it.
    ``history`` holds the interview's earlier questions and answers (a conversation).
    """
    recent = recent_day(stream, resident.name, now, day_began(now, resident.wake), k=day)
    shown = {m.id for m in recent}
    found = stream.retrieve(resident.name, question, now=now, k=k + len(recent), weights=weights,
                            touch=False) if stream.has(resident.name) else []
    recalls = [r for r in found if r.memory.id not in shown][:k]
    answer = yield Request(prompts.INTERVIEW_PURPOSE, prompts.interview_messages(
        resident.describe(), resident.name, prompts.memory_lines(recalls), question, list(history), recent),
        parse_answer)
    return answer, recent + [r.memory for r in recalls]


class AnswerRecord(TypedDict):
    """An :class:`Answer` as ``--json`` writes it: its empty fields (no answer, no score, no why) left out."""

    agent: str
    category: str
    question: str
    answer: NotRequired[str]
    memory_ids: list[int]
    score: NotRequired[int]
    hallucinated: NotRequired[bool]
    why: NotRequired[str]
    repeats: bool


@dataclass
class Answer:
    agent: str
    category: str
    question: str
    answer: str | None
    memory_ids: list[int]
    score: int | None = None
    hallucinated: bool | None = None
    why: str = ""
    repeats: bool = False  # the same answer as to another of the agent's questions (memstream.sim.talk.repeats)

    def to_dict(self) -> AnswerRecord:
        return cast(AnswerRecord, {k: v for k, v in asdict(self).items() if v is not None and v != ""})


def load_battery(path: str | Path | None = None) -> dict[str, list[str]]:
    """Category -> questions, from a YAML/JSON file (a list is one category, "questions"); the bundled one
    by default. Each question may name the fields in FIELDS, in braces."""
    path = Path(path) if path else BUNDLED_BATTERY
    data = read_data(path, "battery file")
    if isinstance(data, list):
        data = {"questions": data}
    if not isinstance(data, dict) or not data or not all(
            isinstance(c, str) and isinstance(qs, list) and qs and all(isinstance(q, str) and q.strip() for q in qs)
            for c, qs in data.items()):
        raise MemstreamError(f"{path} is not a battery: give categories, each a list of questions (or one list)")
    for questions in data.values():
        for q in questions:
            try:
                q.format(**dict.fromkeys(FIELDS, ""))
            except (KeyError, IndexError, ValueError):
                raise MemstreamError(f"{path}: the question {q[:60]!r} names an unknown field; use "
                                     + ", ".join("{" + f + "}" for f in FIELDS)) from None
    return data


def ask(resident: Resident, others: list[str], question: str) -> str:
    """A battery question filled in for ``resident`` (``other``: someone it knows, else another agent)."""
    other = next(iter(resident.relationships), None) or next((o for o in others if o != resident.name), "")
    return question.format(name=resident.name, first=resident.name.split()[0], occupation=resident.occupation
                           or "your work", workplace=resident.workplace or "work", other=other)


def battery_stage(stream: MemoryStream, residents: list[Resident], battery: dict[str, list[str]],
                  now: dict[str, datetime], *, k: int = 10) -> Stage[list[Answer]]:
    """Every question of the battery to every resident (all asked in one batch)."""
    names = [r.name for r in residents]
    asked = [(r, category, ask(r, names, q)) for r in residents for category, qs in battery.items() for q in qs]
    results = yield from concurrently([interview_stage(stream, r, q, now[r.name], k=k) for r, _, q in asked])
    return mark_repeats([Answer(r.name, category, q, answer, [m.id for m in shown])
                         for (r, category, q), (answer, shown) in zip(asked, results, strict=True)])


def mark_repeats(answers: list[Answer]) -> list[Answer]:
    """Each answer's ``repeats``: whether it repeats the same agent's answer to another question."""
    for agent in {a.agent for a in answers}:
        own = [a for a in answers if a.agent == agent]
        for a, flag in zip(own, flag_repeats([(a.question, a.answer) for a in own]), strict=True):
            a.repeats = flag
    return answers


def judge_stage(stream: MemoryStream, residents: dict[str, Resident], answers: list[Answer]) -> Stage[list[Answer]]:
    """Each answer scored by the model (1-5, and whether it says what the memories do not)."""
    requests = []
    for a in answers:
        shown = [stream.get(a.agent, i) for i in a.memory_ids]
        lines = "\n".join(f"- ({m.kind}, importance {m.importance}) {' '.join(m.text.split())}" for m in shown)
        requests.append(Request(prompts.JUDGE_PURPOSE, prompts.judge_messages(
            residents[a.agent].describe(), lines or "- (nothing)", a.category, a.question, a.answer or "(no answer)"),
            parse_judgement))
    verdicts: list[Judgement | None] = yield requests
    for a, v in zip(answers, verdicts, strict=True):
        if v is not None:
            a.score, a.hallucinated, a.why = v.score, v.hallucinated, v.why
    return answers


def knows_stage(stream: MemoryStream, residents: list[Resident], fact: str, now: dict[str, datetime], *,
                k: int = 10) -> Stage[dict[str, tuple[Knows | None, list[int]]]]:
    """Each resident asked whether it knows of ``fact``: its answer and the memories it was shown."""
    shown = {r.name: stream.retrieve(r.name, fact, now=now[r.name], k=k, touch=False) if stream.has(r.name) else []
             for r in residents}
    answers = yield [Request(prompts.KNOWS_PURPOSE, prompts.knows_messages(
        r.describe(), r.name, prompts.memory_lines(shown[r.name]), fact), parse_knows) for r in residents]
    return {r.name: (a, [m.memory.id for m in shown[r.name]]) for r, a in zip(residents, answers, strict=True)}
