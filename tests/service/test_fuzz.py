"""The OpenAPI spec fuzzed against the app in-process (schemathesis): whatever the spec allows a client to send,
the server answers without a server error, and with what the spec says it answers. Bounded: a few examples per
operation, seconds in all."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="the fuzz run needs schemathesis (memstream[dev])")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    response_schema_conformance,
    status_code_conformance,
)

from memstream.designs import entry  # noqa: E402
from memstream.models import make_embedder  # noqa: E402
from memstream.service import LOCAL, MemoryService, Tokens, create_app  # noqa: E402
from tests.service.conftest import ADMIN, TOKENS, entries  # noqa: E402

pytestmark = pytest.mark.slow

_where = tempfile.TemporaryDirectory()
SERVICE = MemoryService(Path(_where.name) / "s.db", ["vector", "full"], embedder=make_embedder("hash"))
SERVICE.add(LOCAL, "ana", [entry(**e) for e in entries("I moved to Lisbon")])  # an owner to find
APP = create_app(SERVICE, Tokens.parse(TOKENS))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_spec_fuzzed_finds_no_server_error(case) -> None:
    from schemathesis.checks import not_a_server_error

    case.call_and_validate(headers={"Authorization": f"Bearer {ADMIN}"},
                           checks=[not_a_server_error, status_code_conformance, response_schema_conformance])
