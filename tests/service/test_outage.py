"""The database going away under a server (PostgreSQL restarting, simulated by ending the server's own
connections): the requests that fail answer 503 with the reason, nothing is half-written, and the server keeps
serving once the database answers again."""

from __future__ import annotations

import uuid

import pytest

from tests.service.conftest import ANA, bearer, entries


def end_connections(url: str, name: str) -> int:
    """End every connection of the application ``name`` (what a restart does to them); how many."""
    import psycopg

    base = url.split("?", 1)[0]
    with psycopg.connect(base, autocommit=True) as db:
        rows = db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                          (name,)).fetchall()
    return len(rows)


@pytest.mark.slow
def test_connections_ended_under_load_are_503s_then_the_server_serves_again(serve, postgres_spec: str) -> None:
    name = f"memstream_outage_{uuid.uuid4().hex[:8]}"
    c = serve(f"{postgres_spec}&application_name={name}")
    h = bearer(ANA)
    assert c.post("/v1/add", json={"owner": "ana", "entries": entries("before")}, headers=h).status_code == 200
    acked = ["before"]
    statuses = []
    for round_ in range(3):
        assert end_connections(postgres_spec, name) >= 1
        for i in range(6):
            text = f"round {round_} write {i}"
            r = c.post("/v1/add", json={"owner": "ana", "entries": entries(text)}, headers=h)
            statuses.append(r.status_code)
            assert r.status_code in (200, 503), r.text
            if r.status_code == 200:
                acked.append(text)
            else:
                assert "\n" not in r.json()["detail"]
            read = c.get("/v1/records", params={"owner": "ana", "size": 500}, headers=h)
            assert read.status_code in (200, 503)
    assert 503 in statuses  # the pool hands out an ended connection once: that request fails, and says so
    assert statuses[-1] == 200  # serving again
    have = [r["text"] for r in c.get("/v1/records", params={"owner": "ana", "size": 500}, headers=h).json()["records"]]
    assert set(acked) <= set(have) and len(have) == len(set(have))
    assert set(have) <= set(acked) | {f"round {r} write {i}" for r in range(3) for i in range(6)}
