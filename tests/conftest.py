from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstream.models import HashEmbedder, OfflineChatModel
from memstream.stream import MemoryStream

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def hours(h: float) -> datetime:
    return T0 + timedelta(hours=h)


@pytest.fixture
def chat() -> OfflineChatModel:
    """The offline stand-in, fresh per test (its usage counts start at zero)."""
    return OfflineChatModel()


@pytest.fixture
def stream() -> MemoryStream:
    s = MemoryStream(":memory:", HashEmbedder(64))
    yield s
    s.close()
