"""What an agent process yields when it needs the model: the world answers every Ask of a step in one batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memstream.models.base import Message


@dataclass
class Ask:
    """Questions an agent puts to the model; the answer is the parsed list, None where unusable."""

    purpose: str
    batch: list[list[Message]]
    parse: Callable[[str], Any]
