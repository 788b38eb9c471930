"""Fixtures every test may use: the offline chat model, an in-memory stream, and an environment that
keeps the structured-output probe off. Plain helpers (the clock, run readers) are in tests/helpers.py."""

from __future__ import annotations

import os

import pytest

from memstream.models import HashEmbedder, OfflineChatModel
from memstream.stream import MemoryStream

# Tests answer from scripted servers that count requests: the structured-output probe
# (memstream.models.probe) stays off unless a test asks for it, whatever the shell exports.
os.environ["MEMSTREAM_STRUCTURED"] = "json_schema"


@pytest.fixture
def chat() -> OfflineChatModel:
    """The offline stand-in, fresh per test (its usage counts start at zero)."""
    return OfflineChatModel()


@pytest.fixture
def stream() -> MemoryStream:
    s = MemoryStream(":memory:", HashEmbedder(64))
    yield s
    s.close()
