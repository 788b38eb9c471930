"""``memstream view RUN --serve``: the page, and retrieval for its search box, from 127.0.0.1.

Why a server: ranking an agent's memories for a typed query needs the query's embedding by the
run's own embedder (MiniLM), which a page cannot carry; precomputing every query is impossible.
So the page is served with ``/recall?agent=NAME&q=TEXT&t=TIME`` beside it, answered by the
paper's score over the run's stream at that simulated time, read-only (recall does not touch); on a run on
another design, by that design's context as it stood then (its memories in the design's order, no scores).
``TIME`` is seconds into the run (what the page sends) or an ISO time with its zone
(``2023-02-13T08:30:00-08:00``); anything else is one 400 naming the value.

Why the server warms up before it listens: the embedder loads its model (MiniLM's ONNX session and
tokenizer) on its first text, which made the first search take seconds; the stream's indexes and the
model are made ready once, at start, so every request costs one query embedding and one scoring.
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from memstream.errors import MemstreamError
from memstream.sim import RunDir
from memstream.timeutil import parse_time
from memstream.view.page import render

#: Memories the search box shows.
TOP_K = 10


def seconds_into(run: RunDir, seconds: float) -> float:
    """The ``t=`` of a request, seconds into the run: a finite number from 0 to the run's length
    (NaN, infinity and times outside the run are refused; the page rounds its end to a whole second,
    so up to a second past it counts as the end)."""
    length = (run.end - run.config.start).total_seconds()
    if not math.isfinite(seconds) or not 0 <= seconds <= length + 1:
        raise MemstreamError(f"t={seconds:g} is not a time of this run (0 to {length:g} seconds)")
    return min(seconds, length)


def seconds_of(run: RunDir, value: str) -> float:
    """The ``t=`` of a request as seconds into the run: a number of seconds as given, or an ISO time with
    its zone (a ``+`` of its offset that the query string turned into a space is read back as ``+``)."""
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    zoned = text[:10] + text[10:].replace(" ", "+") if len(text) > 10 else text  # "+08:00" decoded as " 08:00"
    try:
        at = parse_time(zoned, "t=")
    except MemstreamError:
        raise MemstreamError(f"t={value[:60]!r} is neither seconds into the run nor an ISO time with its zone "
                             f"(e.g. {run.config.start.isoformat()})") from None
    return (at - run.config.start).total_seconds()


def warm_up(run: RunDir) -> None:
    """Make the run's stream and its embedder ready (indexes built, model loaded) before the first request."""
    run.stream.embedder.embed(["warm up"])


def recall(run: RunDir, agent: str, query: str, seconds: float, k: int = TOP_K) -> list[dict[str, Any]]:
    """The agent's top ``k`` memories for ``query`` at ``seconds`` into the run, with the weighted parts."""
    if agent not in run.agents or not run.stream.has(agent):
        raise MemstreamError(f"no agent {agent!r} with memories in this run")
    if not query.strip():
        raise MemstreamError("type a query")
    at = run.config.start + timedelta(seconds=seconds_into(run, seconds))
    found = run.memory_at(at)  # what the agent recalled then: the stream, or its design's context (no scores)
    if found is None:
        return []
    stands, memory = found
    recalls = memory.retrieve(agent, query, now=stands, k=k, touch=False)
    w = memory.weights
    return [{"id": r.memory.id, "kind": r.memory.kind, "text": r.memory.text, "score": round(r.score, 4),
             "recency": round(w.recency * r.recency, 4), "importance": round(w.importance * r.importance, 4),
             "relevance": round(w.relevance * r.relevance, 4)} for r in recalls]


def serve(run_dir: str | Path, *, port: int = 8765, fact: str | None = None) -> None:
    """Serve the run's page and its retrieval on 127.0.0.1:``port`` until interrupted."""
    with RunDir.open(run_dir) as run:
        page = render(run, fact, served=True).encode("utf-8")
        warm_up(run)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the http.server interface
                url = urlparse(self.path)
                if url.path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", page)
                elif url.path == "/recall":
                    q = parse_qs(url.query)
                    try:
                        rows = recall(run, q.get("agent", [""])[0], q.get("q", [""])[0],
                                      seconds_of(run, q.get("t", ["0"])[0]))
                        self._send(200, "application/json", json.dumps(rows).encode())
                    except (MemstreamError, ValueError) as e:
                        self._send(400, "application/json", json.dumps({"error": str(e)}).encode())
                else:
                    self._send(404, "text/plain", b"not found")

            def _send(self, code: int, kind: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:  # quiet: one line at start is enough
                return

        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as e:
            raise MemstreamError(f"cannot listen on 127.0.0.1:{port} ({e.strerror}); choose another --port") from None
        print(f"serving {run.path.name} at http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        finally:
            server.server_close()
