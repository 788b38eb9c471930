"""The OpenAPI spec fuzzed against the app in-process (schemathesis): whatever the spec allows a client to send,
the server answers without a server error, with a status the spec names and a body of the schema it names.
Bounded: a few examples per operation, seconds in all; everything is made inside the test, so collecting it
(in the fast loop, which leaves it out) costs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from memstream.designs import entry
from memstream.models import make_embedder
from memstream.service import LOCAL, MemoryService, Tokens, create_app
from tests.service.conftest import ADMIN, TOKENS, entries

pytestmark = pytest.mark.slow

#: Examples per operation: enough to reach every refusal of every operation, few enough for seconds.
EXAMPLES = 5


def test_the_spec_fuzzed_finds_no_server_error(tmp_path: Path) -> None:
    schemathesis = pytest.importorskip("schemathesis", reason="the fuzz run needs schemathesis (memstream[dev])")
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

    with MemoryService(tmp_path / "s.db", ["vector", "full"], embedder=make_embedder("hash")) as service:
        service.add(LOCAL, "ana", [entry(**e) for e in entries("I moved to Lisbon")])  # an owner to find
        schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(service, Tokens.parse(TOKENS)))
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 10
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
            def fuzz(case) -> None:
                case.call_and_validate(headers={"Authorization": f"Bearer {ADMIN}"},
                                       checks=[not_a_server_error, status_code_conformance, response_schema_conformance])

            fuzz()
