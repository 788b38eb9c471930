"""Interviews: an agent answers a question from its own memories, as the paper's evaluation did."""

from __future__ import annotations

from datetime import datetime

from memstream.models.request import Request, Stage
from memstream.sim import prompts
from memstream.sim.parse import parse_answer
from memstream.sim.world import Resident
from memstream.stream import MemoryStream, Recall, Weights


def interview_stage(stream: MemoryStream, resident: Resident, question: str, now: datetime, *, k: int = 10,
                    weights: Weights | None = None,
                    history: list[tuple[str, str]] = ()) -> Stage[tuple[str | None, list[Recall]]]:
    """The agent's answer (None if the model gave none) and the memories it was shown.

    Retrieval does not touch the memories: an interview observes the agent, it does not change it.
    ``history`` holds the interview's earlier questions and answers (a conversation).
    """
    recalls = stream.retrieve(resident.name, question, now=now, k=k, weights=weights, touch=False)
    answer = yield Request(prompts.INTERVIEW_PURPOSE, prompts.interview_messages(
        resident.describe(), resident.name, prompts.memory_lines(recalls), question, list(history)), parse_answer)
    return answer, recalls
