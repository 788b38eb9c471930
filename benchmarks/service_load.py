"""``memstream serve`` under load: N concurrent clients × M writes and reads across K owners, on loopback.

    python benchmarks/service_load.py [--clients 32] [--ops 2000] [--owners 200]
                                      [--backends sqlite,postgres,postgres-2] [--postgres URL] [--json]
    python benchmarks/service_load.py --quick        # 4 clients × 20 operations × 8 owners, SQLite: seconds

Each back-end gets a fresh store and real server processes (``postgres-2``: two servers sharing one PostgreSQL
store, the clients split between them), each owner a token of its own. A client's operations alternate: a write
(one entry with its own id, naming its owner) and a read (list, search or context, in turn) of an owner it
wrote, through :class:`memstream.client.MemoryClient`. Then every owner is read back whole. Counted:
acknowledged writes lost (acked, not there), duplicated (there more than once), cross-owner reads (a record of
another owner in an answer), and errors; latency p50/p99 per endpoint and acknowledged writes per second.
The design is ``vector`` with the hash embedder (what is measured is the service and the store, not relevance).
PostgreSQL: ``--postgres URL`` or ``MEMSTREAM_TEST_POSTGRES`` (``bash .ci/postgres`` prints it); a fresh schema
is made and dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memstream.client import MemoryClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

ROOT = Path(__file__).resolve().parents[1]
AT = "2026-05-01T10:00:00+00:00"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``memstream serve`` in a child process on a free port, answering once started (the hash embedder)."""

    def __init__(self, store: str, tokens: Path | None = None, *extra: str, wait_s: float = 90) -> None:
        self.port = free_port()
        argv = [sys.executable, "-m", "memstream.cli", "serve", "--store", store, "--port", str(self.port), *extra]
        if tokens:
            argv += ["--tokens", str(tokens)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMSTREAM_EMBEDDER": "hash"}
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}"
        end = time.monotonic() + wait_s
        with MemoryClient(self.url, timeout=2) as probe:
            while time.monotonic() < end:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the server stopped: {self.proc.stderr.read() if self.proc.stderr else ''}")
                try:
                    if probe.health().ok:
                        return
                except Exception:
                    time.sleep(0.2)
        self.kill()
        raise RuntimeError("the server did not answer in time")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> str:
        """Stop it (SIGTERM, then SIGKILL); what it wrote to stderr."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.stderr.read() if self.proc.stderr else ""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def load(urls: list[str], tokens: dict[str, str], admin: str, clients: int, ops: int) -> dict:
    """Run the load against ``urls`` (client n calls urls[n % len]) with each owner's token; what it counted."""
    owners = list(tokens)
    acked: dict[str, list[str]] = defaultdict(list)
    latency: dict[str, list[float]] = defaultdict(list)
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def client(n: int) -> None:
        url = urls[n % len(urls)]
        mine = [owners[(n + k * clients) % len(owners)] for k in range(max(1, len(owners) // clients))]
        calls = {o: MemoryClient(url, tokens[o]) for o in mine}
        try:
            for i in range(ops):
                owner = mine[(i // 2) % len(mine)]
                c = calls[owner]
                what = "add" if i % 2 == 0 else ("list", "search", "context")[(i // 2) % 3]
                started = time.perf_counter()
                try:
                    if what == "add":
                        text = f"owner {owner}: client {n} write {i}"
                        c.add(owner, [{"text": text, "at": AT, "id": f"c{n}-{i}"}])
                    elif what == "list":
                        seen = [r.owner for r in c.list(owner, size=100).records]
                    elif what == "search":
                        seen = [h.record.owner for h in c.search(owner, f"client {n} write", limit=5)]
                    else:
                        ctx = c.context(owner, f"client {n}", budget=300)
                        seen = [owner] if all(f"owner {owner}:" in line or not line.startswith("owner ")
                                              for line in ctx.text.splitlines()) else ["another"]
                except Exception as e:
                    with lock:
                        counts[f"error {what}: {type(e).__name__}"] += 1
                    continue
                took = time.perf_counter() - started
                with lock:
                    latency[what].append(took)
                    if what == "add":
                        acked[owner].append(text)
                    elif any(o != owner for o in seen):
                        counts["cross-owner reads"] += 1
        finally:
            for m in calls.values():
                m.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    seconds = time.perf_counter() - started
    writes = sum(map(len, acked.values()))
    lost = duplicated = 0
    with MemoryClient(urls[0], admin) as everyone:
        for owner, texts in acked.items():
            have = _everything(everyone, owner)
            lost += len(set(texts) - set(have))
            duplicated += len(have) - len(set(have))
            counts["cross-owner reads"] += sum(not t.startswith(f"owner {owner}:") for t in have)
    return {"clients": clients, "ops_per_client": ops, "owners": len(owners), "servers": len(urls),
            "acknowledged_writes": writes, "lost": lost, "duplicated": duplicated,
            "cross_owner_reads": counts.pop("cross-owner reads", 0), "errors": dict(counts),
            "writes_per_s": round(writes / seconds, 1), "seconds": round(seconds, 2),
            "latency_ms": {w: {"p50": round(percentile(v, 0.5) * 1000, 1), "p99": round(percentile(v, 0.99) * 1000, 1),
                               "n": len(v)} for w, v in sorted(latency.items())}}


def _everything(client: MemoryClient, owner: str) -> list[str]:
    page = client.list(owner, size=500)
    have = [r.text for r in page.records]
    while len(have) < page.total:
        page = client.list(owner, page=page.page + 1, size=500)
        have += [r.text for r in page.records]
    return have


def run(backend: str, clients: int, ops: int, owners: int, postgres: str | None, work: Path) -> dict:
    names = [f"owner-{k}" for k in range(owners)]
    tokens = {o: secrets.token_hex(16) for o in names}
    admin = secrets.token_hex(16)
    tokens_file = work / f"tokens-{backend}.txt"
    tokens_file.write_text("".join(f"{t} {o}\n" for o, t in tokens.items()) + f"{admin} *\n")
    schema = None
    if backend == "sqlite":
        store = str(work / "load.db")
    else:
        if not postgres:
            raise SystemExit(f"{backend} needs --postgres URL or MEMSTREAM_TEST_POSTGRES (bash .ci/postgres prints it)")
        schema = f"load_{uuid.uuid4().hex[:12]}"
        store = f"{postgres}{'&' if '?' in postgres else '?'}schema={schema}"
    servers = [Server(store, tokens_file) for _ in range(2 if backend == "postgres-2" else 1)]
    try:
        result = load([s.url for s in servers], tokens, admin, clients, ops)
    finally:
        for s in servers:
            s.stop()
        if schema:
            import psycopg

            with psycopg.connect(postgres, autocommit=True) as db:
                db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return {"backend": backend, **result}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--ops", type=int, default=100, help="operations per client, writes and reads alternating")
    p.add_argument("--owners", type=int, default=16)
    p.add_argument("--backends", default="sqlite", help="sqlite, postgres, postgres-2 (comma-separated)")
    p.add_argument("--postgres", default=os.environ.get("MEMSTREAM_TEST_POSTGRES"))
    p.add_argument("--quick", action="store_true", help="4 clients × 20 operations × 8 owners, SQLite")
    p.add_argument("--json", action="store_true")
    add_results_flag(p, "service_load")
    args = p.parse_args()
    if args.quick:
        args.clients, args.ops, args.owners, args.backends = 4, 20, 8, "sqlite"
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
            rows.append(run(backend, args.clients, args.ops, args.owners, args.postgres, Path(work)))
    if args.results:
        record(args.results, "service_load", "The memory service under concurrent clients", rows)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        print(f"{r['backend']}: {r['clients']} clients × {r['ops_per_client']} ops across {r['owners']} owners, "
              f"{r['servers']} server(s): {r['acknowledged_writes']} writes acknowledged, {r['writes_per_s']}/s; "
              f"lost {r['lost']}, duplicated {r['duplicated']}, cross-owner reads {r['cross_owner_reads']}, "
              f"errors {r['errors'] or 0}")
        for what, lat in r["latency_ms"].items():
            print(f"  {what:8} p50 {lat['p50']:7.1f} ms   p99 {lat['p99']:7.1f} ms   ({lat['n']} calls)")
    bad = [r["backend"] for r in rows if r["lost"] or r["duplicated"] or r["cross_owner_reads"]]
    if bad:
        raise SystemExit(f"lost, duplicated or cross-owner: {', '.join(bad)}")


if __name__ == "__main__":
    main()
