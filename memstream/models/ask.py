"""One model call, parsed, with a single retry that shows the model its parse error.

Weak open models often answer in the wrong shape once and right the second time;
after two unreadable answers the caller gets None and a logged reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from memstream.errors import StructuredOutputError
from memstream.models.base import ChatModel, Message

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_TEMPLATE = "Your answer could not be read: {error}. Answer again, exactly in the format asked."


def retry_messages(messages: list[Message], answer: str, error: str) -> list[Message]:
    return [*messages, {"role": "assistant", "content": answer},
            {"role": "user", "content": RETRY_TEMPLATE.format(error=error)}]


def ask(chat: ChatModel, messages: list[Message], parse: Callable[[str], T], purpose: str,
        problems: list[str] | None = None) -> T | None:
    """Ask, parse, retry once on a parse error; None (reason logged and appended) if still unreadable."""
    answer = chat.complete(messages, purpose=purpose, temperature=0.0)
    try:
        return parse(answer)
    except StructuredOutputError as first:
        again = chat.complete(retry_messages(messages, answer, str(first)), purpose=purpose, temperature=0.0)
        try:
            return parse(again)
        except StructuredOutputError as second:
            reason = f"{purpose}: unreadable twice ({second})"
            log.warning(reason)
            if problems is not None:
                problems.append(reason)
            return None
