"""The FIFO queue: the messages in the agent's view, and what happens as it fills (MemGPT's main context).

Every message the agent sees goes in the queue: the conversation's turns, its own tool calls, the
tools' results, heartbeats and system alerts. Its size is measured against the agent model's window
with the system prompt and core memory around it:

- at ``warn_at`` (70%) of the window a memory-pressure warning is put in the queue, once, so the
  agent can save what matters before it is lost from view;
- at 100% about half of the queue (``evict_share``, oldest first, never the turn being handled) is
  evicted: its conversation
  turns go to the recursive summary (new summary = summarise(old summary + evicted)); every turn
  stays in recall storage, searchable with ``conversation_search``; tool chatter is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from memstream.models import count_tokens

Role = Literal["user", "assistant", "tool", "system"]
Pressure = Literal["evict", "warn"]


@dataclass(frozen=True)
class QueueMessage:
    """One message in view: who it is from, its text as the model reads it, the records it carries."""

    role: Role
    text: str
    ids: tuple[int, ...] = ()
    tokens: int = 0

    @classmethod
    def of(cls, role: Role, text: str, ids: tuple[int, ...] = ()) -> QueueMessage:
        return cls(role, text, ids, count_tokens(text))


@dataclass
class Queue:
    messages: list[QueueMessage] = field(default_factory=list)
    warned: bool = False  # a warning is in the queue since the last eviction

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.messages)

    def add(self, role: Role, text: str, ids: tuple[int, ...] = ()) -> None:
        self.messages.append(QueueMessage.of(role, text, ids))

    def evict(self, share: float) -> list[QueueMessage]:
        """The oldest ``share`` of the messages taken out (at least one), never the turn being handled (the
        newest that carries a record) nor what follows it; the warning is reset. Empty if nothing may go."""
        current = next((i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i].ids),
                       len(self.messages) - 1)
        n = min(max(1, round(len(self.messages) * share)), current)
        gone, self.messages = self.messages[:n], self.messages[n:]
        if gone:
            self.warned = False
        return gone


def pressure(used: int, window: int, warn_at: float, warned: bool) -> Pressure | None:
    """What the queue's fill calls for: eviction at the window, a warning (once) at ``warn_at`` of it."""
    if used >= window:
        return "evict"
    if used >= warn_at * window and not warned:
        return "warn"
    return None
