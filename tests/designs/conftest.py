"""Store specs for both back-ends, so each store test runs on an SQLite file and on PostgreSQL.

``store_spec`` yields ``tmp_path/"s.db"`` and a ``postgresql://`` URL naming a fresh schema (dropped after
the test). The PostgreSQL server is the one ``MEMSTREAM_TEST_POSTGRES`` names (``.ci/run`` starts this
machine's cluster, on loopback only, and sets it); where it is unset or cannot be reached, the PostgreSQL
cases are left out and the run says so in one line at its end (not a line per test).
``postgres_spec`` is the PostgreSQL case alone.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

#: The environment variable naming the test server (one name, set by .ci/run).
POSTGRES_ENV = "MEMSTREAM_TEST_POSTGRES"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_LEFT_OUT = pytest.StashKey[str]()


@functools.cache
def postgres_server() -> tuple[str | None, str]:
    """The test server's URL, or None with the reason the PostgreSQL tests skip."""
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if not url:
        return None, f"PostgreSQL store tests not run: {POSTGRES_ENV} is not set (.ci/run starts a server and sets it)"
    host = urlsplit(url).hostname or ""
    if host not in LOOPBACK and not host.startswith("127."):
        return None, f"PostgreSQL store tests not run: {POSTGRES_ENV} names {host!r}, not a loopback address"
    try:
        import psycopg
    except ImportError:
        return None, "PostgreSQL store tests not run: psycopg is not installed (pip install 'memstream[postgres]')"
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as e:
        return None, f"PostgreSQL store tests not run: {POSTGRES_ENV} cannot be reached ({str(e).splitlines()[0][:100]})"
    return url, ""


def on_postgres(item: pytest.Item) -> bool:
    """Whether a collected test runs on the PostgreSQL server."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return "postgres_spec" in getattr(item, "fixturenames", ()) or params.get("store_spec") == "postgres"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    url, why = postgres_server()
    left_out = [item for item in items if on_postgres(item)] if url is None else []
    if left_out:
        items[:] = [item for item in items if not on_postgres(item)]
        config.hook.pytest_deselected(items=left_out)
        config.stash[_LEFT_OUT] = f"{why} ({len(left_out)} tests)"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if _LEFT_OUT in config.stash:
        terminalreporter.write_line(config.stash[_LEFT_OUT])


def fresh_schema(url: str) -> Iterator[str]:
    """A store URL naming a schema of its own, dropped (with everything in it) afterwards."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:16]}"
    yield f"{url}{'&' if '?' in url else '?'}schema={schema}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def postgres_spec() -> Iterator[str]:
    url, why = postgres_server()
    if url is None:
        pytest.skip(why)
    yield from fresh_schema(url)


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store for one test: an SQLite file, then a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield str(tmp_path / "s.db")
        return
    url, why = postgres_server()
    if url is None:
        pytest.skip(why)
    yield from fresh_schema(url)
