"""Stand-ins for a remote model endpoint with latency, answering with memstream's offline rules.

- :class:`LatencyChat`: in process; every request is answered after ``latency_ms`` with at most
  ``concurrency`` in flight (asyncio), the shape of a remote vLLM server seen from a client.
- :class:`OfflineRulesServer`: a small OpenAI-compatible HTTP server on 127.0.0.1 that answers
  ``/v1/chat/completions`` with the offline rules after the same delay, so memstream's real HTTP
  client (``openai:MODEL`` with ``OPENAI_BASE_URL``) and its concurrency are measured too. The
  rule is chosen by the ``X-Memstream-Purpose`` header memstream's client sends.

Neither is a language model: they measure memstream's waiting, not a model's answers.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import memstream.sim  # noqa: F401 - registers every stage's offline rules
from memstream.models.base import Call, ChatModel, Completion, Message
from memstream.models.offline import OfflineChatModel
from memstream.models.openai_backend import run_coroutine


class LatencyChat(ChatModel):
    """The offline rules behind a delay: each request takes ``latency_ms``, ``concurrency`` at a time."""

    def __init__(self, latency_ms: float, concurrency: int) -> None:
        super().__init__()
        self.latency_s, self.concurrency = latency_ms / 1000, concurrency
        self.inner = OfflineChatModel()
        self.name = self.inner.name  # same answers, same cache keys

    def _generate(self, messages: list[Message], purpose: str, params: dict[str, Any]) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: dict[str, Any]) -> list[Completion]:
        return run_coroutine(self._answer(calls, params))

    async def _answer(self, calls: list[Call], params: dict[str, Any]) -> list[Completion]:
        limit = asyncio.Semaphore(self.concurrency)

        async def one(purpose: str, messages: list[Message]) -> Completion:
            async with limit:
                await asyncio.sleep(self.latency_s)
                return self.inner._generate(messages, purpose, params)

        return list(await asyncio.gather(*(one(p, m) for p, m in calls)))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # socketserver's default of 5 refuses a client's burst of connections


class OfflineRulesServer:
    """``with OfflineRulesServer(latency_ms=500) as server:`` then ``OpenAIChat(..., base_url=server.url)``."""

    def __init__(self, latency_ms: float = 0.0) -> None:
        self.latency_s = latency_ms / 1000
        self.requests = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        rules = OfflineChatModel()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real server

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                purpose = self.headers.get("X-Memstream-Purpose", "other")
                with outer._lock:
                    outer.requests += 1
                    outer._in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer._in_flight)
                time.sleep(outer.latency_s)
                answer = rules._generate(body["messages"], purpose, {})
                with outer._lock:
                    outer._in_flight -= 1
                payload = json.dumps({
                    "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": answer.text}}],
                    "usage": {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
                              "total_tokens": answer.prompt_tokens + answer.completion_tokens}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> OfflineRulesServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
