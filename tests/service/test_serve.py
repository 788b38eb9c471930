"""``memstream serve`` as a user runs it: a real server process on a free port, called by the client; killed
with kill -9 in the middle of a write load and started again: every acknowledged write is there and the store
passes its check."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks.service_load import Server
from benchmarks.service_load import main as load_main
from memstream.cli import main
from memstream.client import MemoryClient
from memstream.designs.store import check
from memstream.service import Forbidden, NotFound, Unauthorized
from tests.service.conftest import ANA, AT, BEN, TOKENS

ROOT = Path(__file__).resolve().parents[2]


def test_another_host_without_tokens_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--store", str(tmp_path / "s.db"), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "without --tokens" in err[0]
    assert not (tmp_path / "s.db").exists()


def test_a_port_taken_or_out_of_range_is_refused_in_one_line_before_the_store_is_made(tmp_path: Path, capsys) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        number = taken.getsockname()[1]
        assert main(["serve", "--store", str(tmp_path / "s.db"), "--port", str(number)]) == 2
    assert main(["serve", "--store", str(tmp_path / "s.db"), "--port", "70000"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "cannot listen" in err[0] and "not a port" in err[1]
    assert not (tmp_path / "s.db").exists()


@pytest.fixture
def tokens(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.txt"
    path.write_text(TOKENS)
    return path


@pytest.mark.slow
def test_the_client_adds_and_reads_through_a_real_server(store_spec: str, tokens: Path) -> None:
    server = Server(store_spec, tokens)
    try:
        with MemoryClient(server.url, ANA) as ana, MemoryClient(server.url, BEN) as ben:
            ids = ana.add("ana", [{"text": "I moved to Lisbon", "at": AT}, {"text": "I like cats", "at": AT}])
            assert ana.search("ana", "I like cats", limit=1)[0].record.id == ids[1]
            assert [r.id for r in ana.list("ana").records] == ids
            assert ana.get("ana", ids[0]).text == "I moved to Lisbon"
            assert "Lisbon" in ana.context("ana", "Lisbon", budget=100).text
            assert ana.owners() == ["ana"]
            with pytest.raises(NotFound):
                ben.list("ana")
            with pytest.raises(Forbidden):
                ben.add("ana", [{"text": "planted", "at": AT}])
            with pytest.raises(Unauthorized):
                MemoryClient(server.url).owners()
            assert ana.forget("ana")["vector"] >= 2  # rows removed: the records and the owner's
    finally:
        log = server.stop()
    assert ANA not in log and BEN not in log  # tokens are never logged


@pytest.mark.slow
def test_kill_9_mid_write_load_loses_no_acknowledged_write(store_spec: str, tmp_path: Path) -> None:
    server = Server(store_spec, None)
    acked: dict[str, list[str]] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(n: int) -> None:
        owner = f"owner-{n % 3}"
        with MemoryClient(server.url, timeout=5) as c:
            for i in range(10_000):
                if stop.is_set():
                    return
                text = f"writer {n} entry {i}"
                try:
                    c.add(owner, [{"text": text, "at": AT, "id": f"w{n}-{i}"}])
                except Exception:
                    return  # the server is gone: this write was never acknowledged
                with lock:
                    acked.setdefault(owner, []).append(text)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    server.kill()  # mid-load: writes in flight are lost, none acknowledged may be
    stop.set()
    for t in threads:
        t.join(30)
    assert sum(map(len, acked.values())) > 0
    if not store_spec.startswith("postgres"):
        assert check(store_spec) == []
    again = Server(store_spec, None)
    try:
        with MemoryClient(again.url) as c:
            for owner, texts in acked.items():
                page = c.list(owner, size=500)
                have = [r.text for r in page.records]
                while len(have) < page.total:
                    page = c.list(owner, page=page.page + 1, size=500)
                    have += [r.text for r in page.records]
                assert set(texts) <= set(have), f"{owner}: acknowledged writes missing"
                assert len(have) == len(set(have)), f"{owner}: a write stored twice"
    finally:
        again.stop()
    assert check(store_spec) == []


@pytest.mark.slow
def test_the_load_benchmark_runs_quick_and_loses_nothing(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["service_load.py", "--quick", "--json"])
    load_main()  # exits non-zero on a lost, duplicated or cross-owner record
    (row,) = json.loads(capsys.readouterr().out)
    assert row["acknowledged_writes"] == 4 * 10 and row["lost"] == row["duplicated"] == row["cross_owner_reads"] == 0
