"""A new day: the agent revises what it is currently doing and caring about before it plans.

As the reference implementation's ``revise_identity``: at wake-up, after a day lived, the agent
retrieves what matters from before today on two focal points (its plan for the day, the important
recent events of its life), and the model rewrites its *currently* from them. The revision is a
``thought`` memory that cites the memories it rests on; the day plan is made from the revised
identity and cites the revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

from memstream.models import Request, Stage
from memstream.planning import prompts
from memstream.planning.identity import Identity
from memstream.planning.parse import parse_revision
from memstream.planning.planner import cited, listing, start_of_day, write_rated
from memstream.stream import THOUGHT, MemoryStream

#: Memories retrieved per focal point (two focal points; the revision sees at least ten when there are).
REVISE_K = 15


@dataclass
class Revision:
    currently: str
    memory_id: int


def revise_stage(stream: MemoryStream, identity: Identity, now: datetime) -> Stage[Revision | None]:
    """The agent's situation as of ``now`` (a morning), revised from what it remembers from before today.

    None when there is nothing from before today to revise from, or the model gave no usable answer
    (the situation then stays as it was).
    """
    name = identity.name
    if not stream.has(name):
        return None
    day = start_of_day(now)
    focal = [f"{name}'s plan for {day:%A %d %B %Y}", f"Important recent events in {name}'s life"]
    found = stream.retrieve_many([(name, q) for q in focal], now=now, k=REVISE_K)
    memories = sorted({r.memory.id: r.memory for recalls in found for r in recalls
                       if r.memory.created_at < day}.values(), key=lambda m: (m.created_at, m.id))
    if not memories:
        return None
    answer = yield Request(prompts.REVISE_PURPOSE, prompts.revise_messages(
        identity.describe(), name, f"{day:%A %d %B %Y}", listing(memories)), partial(parse_revision, name=name))
    if answer is None:
        return None
    evidence = cited(answer.because, memories) or tuple(m.id for m in memories)  # it was shown all of them
    written = yield from write_rated(stream, name, f"{name}'s situation on the morning of {day:%A %d %B %Y}: "
                                     f"{answer.currently}", now, {"currently": answer.currently}, evidence,
                                     kind=THOUGHT)
    return Revision(answer.currently, written.id)
