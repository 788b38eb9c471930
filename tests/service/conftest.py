"""The service's tests: a :class:`~memstream.service.MemoryService` on each back-end (``store_spec`` of the
design store's tests: an SQLite file, then a fresh PostgreSQL schema where one is reachable), served in-process
through FastAPI's TestClient, with the hash embedder (fast, deterministic; what is tested here is the service,
not relevance)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need memstream[service]")

from fastapi.testclient import TestClient

from memstream.models import make_embedder
from memstream.service import MemoryService, Tokens, create_app
from tests.designs.conftest import (  # noqa: F401 - the fixtures and the hooks that leave PostgreSQL out
    postgres_server,
    postgres_spec,
    pytest_collection_modifyitems,
    pytest_terminal_summary,
    store_spec,
)

#: Tokens of the tests' tokens file: ana's, ben's, and an admin's.
ANA, BEN, ADMIN = "ana-token-0123456789abcdef", "ben-token-0123456789abcdef", "admin-token-0123456789abcdef"
TOKENS = f"# test tokens\n{ANA} ana\n{BEN} ben, Bén Two\n{ADMIN} *\n"
AT = "2026-05-01T10:00:00+00:00"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def entries(*texts: str, at: str = AT) -> list[dict[str, str]]:
    return [{"text": t, "at": at} for t in texts]


@pytest.fixture(scope="session")
def embedder():
    return make_embedder("hash")


@pytest.fixture
def serve(embedder) -> Iterator[Callable[..., TestClient]]:
    """``serve(store, tokens=TOKENS, **service)``: a TestClient on a fresh app (closed after the test)."""
    opened: list[MemoryService] = []

    def make(store: str | Path, tokens: str | None = TOKENS, **kwargs) -> TestClient:
        service = MemoryService(store, embedder=embedder, **kwargs)
        opened.append(service)
        return TestClient(create_app(service, Tokens.parse(tokens) if tokens else None))

    yield make
    for s in opened:
        s.close()
