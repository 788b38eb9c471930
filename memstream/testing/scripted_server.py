"""An OpenAI-compatible HTTP server on 127.0.0.1 answering from a script, to test what a client sends and
how it copes with what comes back (errors, stalls, ``Retry-After``, odd bodies), without a model.

Each scripted reply is ``(status, content)`` or ``(status, content, headers)``; chat requests
pop the next one (a 200 answers with ``content`` as the assistant message, or, when
``content`` is not a string, with ``content`` itself as the whole JSON body; status 0
stalls for ``content`` seconds, to provoke a client timeout; ``headers`` are sent
with the reply, e.g. ``Retry-After``); once the script is used up, chat requests get ``ok``.
Embedding requests answer with a fixed 3-d vector per input. Every request body is recorded.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from memstream.files import JsonObject
from memstream.testing.server import LocalServer, chat_completion

#: One scripted reply: an HTTP status and its content, optionally the headers sent with it.
Reply = tuple[int, Any] | tuple[int, Any, dict[str, str]]


class ScriptedServer(LocalServer):
    """``with ScriptedServer([(200, "yes"), (429, "slow down", {"Retry-After": "1"})]) as server:``,
    then point an OpenAI client at ``server.url``; ``server.requests`` holds every request body."""

    def __init__(self, script: list[Reply], delay: float = 0.0) -> None:
        self.script = list(script)
        self.delay = delay  # every answer takes this long (to see requests overlap)
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stall, headers = 0.0, {}
                with outer.lock:
                    outer.requests.append({"path": self.path, **body})
                    if self.path.endswith("/embeddings"):
                        status, payload = 200, _embeddings(body)
                    else:
                        reply = outer.script.pop(0) if outer.script else (200, "ok")
                        status, content, headers = (*reply, {})[:3]
                        stall = float(content) if status == 0 else 0.0
                        if stall:  # a stalled server: it answers late, after the client gave up
                            status, content = 200, "late"
                        if status == 200 and not isinstance(content, str):
                            payload = content  # a raw body, whatever its shape
                        else:
                            payload = chat_completion(body["model"], content, 11, 2) if status == 200 else {
                                "error": {"message": content, "type": "server_error"}}
                with outer.lock:
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                time.sleep(stall or outer.delay)
                with outer.lock:
                    outer.in_flight -= 1
                data = json.dumps(payload).encode()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    self._reply(status, data, headers)

            def _reply(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)

    def __enter__(self) -> ScriptedServer:
        super().__enter__()
        return self

    @property
    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]


def _embeddings(body: JsonObject) -> JsonObject:
    """A fixed 3-d vector per input (its second coordinate the input's length), so a test can tell them apart."""
    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
    return {"object": "list", "model": body["model"], "data": [
        {"object": "embedding", "index": i, "embedding": [1.0, float(len(t)), 0.5]} for i, t in enumerate(inputs)],
        "usage": {"prompt_tokens": 1, "total_tokens": 1}}
