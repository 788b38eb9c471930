"""Each endpoint of the HTTP API, in-process, on both back-ends; bad input answered with one clear 4xx."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.designs import DESIGNS
from memstream.models import make_chat_model
from memstream.service import MAX_BODY_BYTES, MAX_BUDGET, MAX_ENTRIES, MAX_PAGE_SIZE
from memstream.service.core import storable
from memstream.service.http import create_app
from tests.service.conftest import ADMIN, ANA, AT, bearer, entries

ROOT = Path(__file__).resolve().parents[2]


def test_every_endpoint_on_each_back_end(serve, store_spec: str) -> None:
    c = serve(store_spec)
    h = bearer(ANA)
    r = c.post("/v1/add", json={"owner": "ana", "entries": entries("I moved to Lisbon", "I like cats", "Tea, no sugar")},
               headers=h)
    assert r.status_code == 200, r.text
    ids = r.json()["ids"]
    assert len(set(ids)) == 3
    again = c.post("/v1/add", json={"owner": "ana", "entries": entries("I like cats")}, headers=h)
    assert again.json()["ids"] == [ids[1]]  # the same entry is stored once: its first id

    context = c.post("/v1/context", json={"owner": "ana", "query": "cats", "budget": 200}, headers=h).json()
    assert context["tokens"] <= 200 and set(ids) >= {i for b in context["blocks"] for i in b["ids"]}
    assert "I like cats" in context["text"]
    hits = c.post("/v1/search", json={"owner": "ana", "query": "I like cats", "limit": 2}, headers=h).json()["hits"]
    assert len(hits) == 2 and hits[0]["record"]["text"] == "I like cats"
    assert hits[0]["score"] >= hits[1]["score"]

    page = c.get("/v1/records", params={"owner": "ana", "page": 2, "size": 2}, headers=h).json()
    assert page["total"] == 3 and [r["id"] for r in page["records"]] == ids[2:]
    record = c.get(f"/v1/records/{ids[0]}", params={"owner": "ana"}, headers=h).json()
    assert record["text"] == "I moved to Lisbon" and record["at"].startswith("2026-05-01T10:00:00")
    assert c.get("/v1/records/999999", params={"owner": "ana"}, headers=h).status_code == 404

    updated = c.patch(f"/v1/records/{ids[0]}", json={"owner": "ana", "text": "I moved to Porto"}, headers=h)
    assert updated.status_code == 204 and not updated.content
    assert c.get(f"/v1/records/{ids[0]}", params={"owner": "ana"}, headers=h).json()["text"] == "I moved to Porto"
    deleted = c.delete(f"/v1/records/{ids[2]}", params={"owner": "ana"}, headers=h)
    assert deleted.status_code == 204 and not deleted.content
    assert c.get(f"/v1/records/{ids[2]}", params={"owner": "ana"}, headers=h).status_code == 404
    assert c.delete(f"/v1/records/{ids[2]}", params={"owner": "ana"}, headers=h).status_code == 404
    history = c.get("/v1/history", params={"owner": "ana"}, headers=h)
    assert history.status_code == 409 and "keeps no versions" in history.json()["detail"]
    assert c.get("/v1/owners", headers=h).json() == {"owners": ["ana"]}
    health = c.get("/health").json()
    assert health["ok"] and health["designs"] == ["vector"]

    forgot = c.post("/v1/forget", json={"owner": "ana"}, headers=h)
    assert forgot.status_code == 200 and forgot.json()["removed"]["vector"] >= 2
    assert c.get("/v1/records", params={"owner": "ana"}, headers=h).status_code == 404
    assert c.get("/v1/owners", headers=bearer(ADMIN)).json() == {"owners": []}


@pytest.mark.parametrize("design", [d for d, kind in DESIGNS.items() if kind.changes_records])
def test_one_record_updated_and_deleted_is_what_every_read_then_says(serve, store_spec: str, design: str) -> None:
    """The designs whose memory is their records: PATCH gives the record (same id) its new text, DELETE takes it
    out of every read; both answer 204, and 404 for a record the owner does not have (or no longer has)."""
    c = serve(store_spec, designs=[design])
    h = bearer(ANA)
    ids = c.post("/v1/add", json={"owner": "ana", "entries": entries("I moved to Lisbon", "I like cats", "Tea, no sugar")},
                 headers=h).json()["ids"]
    assert c.patch(f"/v1/records/{ids[0]}", json={"owner": "ana", "text": "I moved to Porto"}, headers=h).status_code == 204
    assert c.delete(f"/v1/records/{ids[1]}", params={"owner": "ana"}, headers=h).status_code == 204
    page = c.get("/v1/records", params={"owner": "ana"}, headers=h).json()
    assert [(r["id"], r["text"]) for r in page["records"]] == [(ids[0], "I moved to Porto"), (ids[2], "Tea, no sugar")]
    assert page["total"] == 2
    context = c.post("/v1/context", json={"owner": "ana", "query": "where do I live, and cats?", "budget": 500},
                     headers=h).json()
    assert "Porto" in context["text"] and "Lisbon" not in context["text"] and "cats" not in context["text"]
    assert ids[1] not in {i for b in context["blocks"] for i in b["ids"]}
    if design == "vector":
        hits = c.post("/v1/search", json={"owner": "ana", "query": "I like cats", "limit": 5}, headers=h).json()["hits"]
        assert sorted(x["record"]["id"] for x in hits) == [ids[0], ids[2]]  # the vector index forgot it too
    gone = c.patch(f"/v1/records/{ids[1]}", json={"owner": "ana", "text": "x"}, headers=h)
    assert gone.status_code == 404 and f"no record {ids[1]}" in gone.json()["detail"]
    blank = c.patch(f"/v1/records/{ids[0]}", json={"owner": "ana", "text": "   "}, headers=h)
    assert blank.status_code == 422 and "empty" in blank.json()["detail"]
    # the same entry sent again after its record was deleted is remembered anew
    again = c.post("/v1/add", json={"owner": "ana", "entries": entries("I like cats")}, headers=h).json()["ids"]
    assert again[0] not in ids


@pytest.mark.parametrize("design", [d for d, kind in DESIGNS.items() if not kind.changes_records and storable(d)])
def test_a_design_that_builds_on_its_records_refuses_with_its_reason(serve, tmp_path: Path, design: str) -> None:
    c = serve(tmp_path / "s.db", designs=[design], chat=make_chat_model("offline"))
    h = bearer(ANA)
    ids = c.post("/v1/add", json={"owner": "ana", "entries": entries("I moved to Lisbon")}, headers=h).json()["ids"]
    for refused in (c.delete(f"/v1/records/{ids[0]}", params={"owner": "ana"}, headers=h),
                    c.patch(f"/v1/records/{ids[0]}", json={"owner": "ana", "text": "I moved to Porto"}, headers=h)):
        assert refused.status_code == 409, refused.text
        assert DESIGNS[design].records_stay in refused.json()["detail"]
        assert "forget the owner" in refused.json()["detail"]
    assert c.delete("/v1/records/999999", params={"owner": "ana"}, headers=h).status_code == 404  # 404 before 409
    assert c.get(f"/v1/records/{ids[0]}", params={"owner": "ana"}, headers=h).json()["text"] == "I moved to Lisbon"


def test_a_design_that_does_not_rank_refuses_search_and_two_designs_are_served(serve, tmp_path: Path) -> None:
    c = serve(tmp_path / "s.db", designs=["vector", "full"])
    h = bearer(ANA)
    assert c.post("/v1/add", json={"owner": "ana", "entries": entries("a"), "design": "full"}, headers=h).status_code == 200
    refused = c.post("/v1/search", json={"owner": "ana", "query": "a", "design": "full"}, headers=h)
    assert refused.status_code == 409 and "does not rank" in refused.json()["detail"]
    # the default design (the first) has no memory of ana: its answer is the unknown owner's
    assert c.post("/v1/search", json={"owner": "ana", "query": "a"}, headers=h).status_code == 404
    assert c.post("/v1/context", json={"owner": "ana", "query": "a", "design": "full"}, headers=h).status_code == 200
    unserved = c.post("/v1/context", json={"owner": "ana", "query": "a", "design": "tiered"}, headers=h)
    assert unserved.status_code == 422 and "does not serve" in unserved.json()["detail"]


def test_scopes_keep_memory_apart(serve, tmp_path: Path) -> None:
    c = serve(tmp_path / "s.db")
    h = bearer(ANA)
    c.post("/v1/add", json={"owner": "ana", "entries": entries("work note"), "scope": "work"}, headers=h)
    assert c.get("/v1/records", params={"owner": "ana"}, headers=h).status_code == 404
    assert c.get("/v1/records", params={"owner": "ana", "scope": "work"}, headers=h).json()["total"] == 1


BAD = [
    (b"{not json", "not valid JSON"),
    (b"[]", "object"),
    (json.dumps({"owner": "ana", "entries": "text"}).encode(), "entries"),
    (json.dumps({"owner": 5, "entries": entries("a")}).encode(), "owner"),
    (json.dumps({"owner": "ana", "entries": [{"text": "a", "at": "2026-05-01T10:00:00"}]}).encode(), "zone"),
    (json.dumps({"owner": "ana", "entries": [{"text": "a", "at": "yesterday"}]}).encode(), "at"),
    (json.dumps({"owner": "an\u0000a", "entries": entries("a")}).encode(), "control characters"),
    (json.dumps({"owner": "ana\u202e", "entries": entries("a")}).encode(), "invisible"),
    (json.dumps({"owner": "ana", "entries": entries("a"), "extra": 1}).encode(), "extra"),
    (json.dumps({"owner": "ana", "entries": entries(*["a"] * (MAX_ENTRIES + 1))}).encode(), "at most"),
    (json.dumps({"owner": "ana", "entries": []}).encode(), "entries"),
    (json.dumps({"owner": "ana", "entries": entries("a"), "scope": "w\u0090rk"}).encode(), "scope"),
    (json.dumps({"owner": "ana", "entries": entries("a"), "scope": "work\u200b"}).encode(), "scope"),
]


@pytest.mark.parametrize(("body", "says"), BAD)
def test_bad_input_is_one_clear_4xx_and_writes_nothing(serve, tmp_path: Path, body: bytes, says: str) -> None:
    c = serve(tmp_path / "s.db")
    r = c.post("/v1/add", content=body, headers={**bearer(ADMIN), "content-type": "application/json"})
    assert 400 <= r.status_code < 500, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and says.lower() in detail.lower()
    assert c.get("/v1/owners", headers=bearer(ADMIN)).json() == {"owners": []}


def test_limits_are_named_4xx(serve, tmp_path: Path) -> None:
    c = serve(tmp_path / "s.db")
    h = bearer(ANA)
    c.post("/v1/add", json={"owner": "ana", "entries": entries("a")}, headers=h)
    huge = c.post("/v1/add", content=b"x" * (MAX_BODY_BYTES + 1), headers={**h, "content-type": "application/json"})
    assert huge.status_code == 413 and f"{MAX_BODY_BYTES:,}" in huge.json()["detail"]

    def chunks():  # no Content-Length: refused once more than the limit has arrived
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536

    chunked = c.post("/v1/add", content=chunks(), headers={**h, "content-type": "application/json"})
    assert chunked.status_code == 413
    over = c.post("/v1/context", json={"owner": "ana", "query": "a", "budget": MAX_BUDGET + 1}, headers=h)
    assert over.status_code == 422 and str(MAX_BUDGET) in over.json()["detail"]
    page = c.get("/v1/records", params={"owner": "ana", "size": MAX_PAGE_SIZE + 1}, headers=h)
    assert page.status_code == 422


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owner=st.text(max_size=30), text=st.text(max_size=60))
def test_any_owner_name_and_text_is_stored_or_refused_in_one_line(serve_once, owner: str, text: str) -> None:
    """Unicode, control characters, empty strings: a 200 whose record reads back, or one 4xx line; never a 500."""
    c = serve_once
    r = c.post("/v1/add", json={"owner": owner, "entries": [{"text": text, "at": AT}]}, headers=bearer(ADMIN))
    assert r.status_code in (200, 422), r.text
    if r.status_code == 200:
        record_id = r.json()["ids"][0]
        got = c.get(f"/v1/records/{record_id}", params={"owner": owner}, headers=bearer(ADMIN))
        assert got.status_code == 200 and got.json()["text"] in (text, text.strip())
    else:
        assert "\n" not in r.json()["detail"]


@pytest.fixture
def serve_once(serve, tmp_path: Path):
    return serve(tmp_path / "s.db")


def test_a_read_only_server_reads_and_refuses_writes(serve, store_spec: str) -> None:
    writer = serve(store_spec)
    writer.post("/v1/add", json={"owner": "ana", "entries": entries("kept")}, headers=bearer(ANA))
    reader = serve(store_spec, read_only=True)
    refused = reader.post("/v1/add", json={"owner": "ana", "entries": entries("new")}, headers=bearer(ANA))
    assert refused.status_code == 409 and "read-only" in refused.json()["detail"]
    assert reader.post("/v1/forget", json={"owner": "ana"}, headers=bearer(ANA)).status_code == 409
    assert reader.get("/v1/records", params={"owner": "ana"}, headers=bearer(ANA)).json()["total"] == 1
    assert reader.get("/health").json()["read_only"] is True


def test_a_store_file_that_turns_read_only_answers_writes_503_and_keeps_reading(serve, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    c = serve(store)
    h = bearer(ANA)
    c.post("/v1/add", json={"owner": "ana", "entries": entries("kept")}, headers=h)
    import sqlite3

    def failing_begin(key=None):  # the disk refusing a write, as SQLite reports it
        raise sqlite3.OperationalError("attempt to write a readonly database")

    bound = c.app.state.service._served(None, "").bound  # type: ignore[attr-defined]
    rows = bound.held.store
    rows.begin = failing_begin  # type: ignore[method-assign]
    r = c.post("/v1/add", json={"owner": "ana", "entries": entries("lost")}, headers=h)
    assert r.status_code == 503 and "readonly" in r.json()["detail"]
    assert c.get("/v1/records", params={"owner": "ana"}, headers=h).json()["total"] == 1


def test_the_committed_openapi_spec_is_the_app_s(serve, tmp_path: Path) -> None:
    """docs/openapi.json is what the app serves; regenerate with `python scripts/openapi.py` after a change."""
    served = serve(tmp_path / "s.db").get("/openapi.json").json()
    assert json.loads((ROOT / "docs" / "openapi.json").read_text()) == served


def test_create_app_is_the_face_s() -> None:
    from memstream import service

    assert service.create_app is create_app
