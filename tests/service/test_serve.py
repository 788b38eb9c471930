"""``memstream serve`` as a user runs it: a real server process on a free port, called by the client; killed
with kill -9 in the middle of a write load and started again: every acknowledged write is there and the store
passes its check."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``memstream serve`` in a child process (the hash embedder: quick to start)."""

    def __init__(self, store: str, tokens: Path | None, *extra: str) -> None:
        self.port = free_port()
        argv = [sys.executable, "-m", "memstream.cli", "serve", "--store", store, "--port", str(self.port), *extra]
        if tokens:
            argv += ["--tokens", str(tokens)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMSTREAM_EMBEDDER": "hash"}
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}"
        self._wait()

    def _wait(self, seconds: float = 90) -> None:
        end = time.monotonic() + seconds
        with MemoryClient(self.url, timeout=2) as probe:
            while time.monotonic() < end:
                if self.proc.poll() is not None:
                    raise AssertionError(f"the server stopped: {self.proc.stderr.read() if self.proc.stderr else ''}")
                try:
                    if probe.health().ok:
                        return
                except Exception:
                    time.sleep(0.2)
        raise AssertionError("the server did not answer in time")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.stderr.read() if self.proc.stderr else ""


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
