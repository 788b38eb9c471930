"""The client mirrors the library's calls and raises the server's error class with its one-line reason (through
the app in-process; a real server process is tests/service/test_serve.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstream.client import MemoryClient
from memstream.designs import entry
from memstream.service import BadRequest, Forbidden, NotAllowed, NotFound, TooLarge, Unauthorized, Unavailable
from tests.service.conftest import ANA, AT, BEN


@pytest.fixture
def app_client(serve, tmp_path: Path):
    return serve(tmp_path / "s.db")


def test_every_call_of_the_client(app_client) -> None:
    with MemoryClient("http://testserver", ANA, http=app_client) as memory:
        ids = memory.remember("ana", [{"text": "I moved to Lisbon", "at": AT},
                                      entry(text="I like cats", at=AT, id="cats")])
        assert memory.add("ana", [entry(text="I like cats", at=AT, id="cats")]) == [ids[1]]
        assert memory.search("ana", "I like cats", limit=1)[0].record.id == ids[1]
        assert [b.ids for b in memory.context("ana", "Lisbon", budget=100).blocks] != []
        assert memory.get("ana", ids[0]).text == "I moved to Lisbon"
        assert memory.list("ana", size=1, page=2).records[0].id == ids[1]
        assert memory.owners() == ["ana"]
        assert memory.health().ok
        memory.update("ana", ids[0], "I moved to Porto")
        assert memory.get("ana", ids[0]).text == "I moved to Porto"
        memory.delete("ana", ids[1])
        with pytest.raises(NotFound, match=f"no record {ids[1]}"):
            memory.get("ana", ids[1])
        with pytest.raises(NotFound, match=f"no record {ids[1]}"):
            memory.delete("ana", ids[1])
        with pytest.raises(NotAllowed, match="keeps no versions"):
            memory.history("ana")
        assert memory.forget("ana")["vector"] >= 1
        with pytest.raises(NotFound, match="no memory for the owner 'ana'"):
            memory.list("ana")


def test_a_design_that_keeps_its_records_refuses_through_the_client(serve, tmp_path: Path) -> None:
    with MemoryClient("http://testserver", ANA, http=serve(tmp_path / "t.db", designs=["tiered"])) as memory:
        ids = memory.add("ana", [{"text": "I moved to Lisbon", "at": AT}])
        with pytest.raises(NotAllowed, match="the tiered design cannot delete one record alone: its session"):
            memory.delete("ana", ids[0])
        with pytest.raises(NotAllowed, match="cannot update one record alone"):
            memory.update("ana", ids[0], "I moved to Porto")


def test_the_client_raises_the_server_s_error_class(app_client) -> None:
    with MemoryClient("http://testserver", BEN, http=app_client) as ben:
        with pytest.raises(Forbidden):
            ben.add("ana", [{"text": "planted", "at": AT}])
        with pytest.raises(BadRequest, match="zone"):
            ben.add("ben", [{"text": "x", "at": "2026-05-01T10:00:00"}])
        with pytest.raises(BadRequest):
            ben.context("ben", "x", budget=10**6)
        with pytest.raises(TooLarge):
            ben.add("ben", [{"text": "x" * 1000, "at": AT, "id": str(i)} for i in range(1500)])
    with MemoryClient("http://testserver", http=app_client) as nobody, pytest.raises(Unauthorized):
        nobody.owners()


def test_a_server_that_cannot_be_reached_is_unavailable_in_one_line() -> None:
    with MemoryClient("http://127.0.0.1:9", timeout=2) as memory, pytest.raises(Unavailable) as raised:
        memory.owners()
    assert "cannot reach the memstream server at http://127.0.0.1:9" in str(raised.value)
    assert "\n" not in str(raised.value)
