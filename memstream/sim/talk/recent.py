"""The recent day: what happened to an agent since its day began, the most telling first.

Retrieval on a question finds what matches its words; a question such as "what did you do today?"
shares few words with what the agent saw and heard this morning, so a small model answered from
its identity alone. The recent day is shown beside what is retrieved (interviews), and what of it
an agent has not told someone yet is what it has to talk about (conversation offers). One
selection serves both, so the two never disagree on what "today" held.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memstream.stream import DIALOGUE, OBSERVATION, THOUGHT, Memory, MemoryStream
from memstream.timeutil import minute_of_day

#: What a day is made of: what the agent saw, said and heard, and thought (not its plans, not reflections).
RECENT_KINDS = (OBSERVATION, DIALOGUE, THOUGHT)
#: The newest memories looked through (a day of a busy agent is a few hundred; older ones are not today's).
LOOK_BACK = 400


def day_began(now: datetime, wake: str) -> datetime:
    """When the agent's day began: its last wake-up time at or before ``now`` (before today's, yesterday's:
    an agent awake past midnight is still in its day)."""
    woke = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(minutes=minute_of_day(wake))
    return woke if woke <= now else woke - timedelta(days=1)


def recent_day(stream: MemoryStream, owner: str, now: datetime, since: datetime, *, k: int,
               kinds: tuple[str, ...] = RECENT_KINDS) -> list[Memory]:
    """``owner``'s memories of ``kinds`` written in ``[since, now]``, most important first, then newest, at
    most ``k``. A dialogue with a thought citing it (its memo) is left to that thought: the memo says the
    same in a line, where the dialogue takes many. A text seen again (the same sighting every few minutes)
    is shown once, its newest."""
    if k <= 0 or not stream.has(owner):
        return []
    day = [m for m in stream.recent(owner, LOOK_BACK) if m.kind in kinds and since <= m.created_at <= now]
    cited = {c for m in day if m.kind == THOUGHT for c in m.cites}
    newest = {m.text: m for m in day}  # oldest id first: the newest of each text stays
    kept = [m for m in newest.values() if not (m.kind == DIALOGUE and m.id in cited)]
    return sorted(kept, key=lambda m: (-m.importance, -m.created_at.timestamp(), -m.id))[:k]
