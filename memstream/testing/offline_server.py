"""An OpenAI-compatible HTTP server on 127.0.0.1 that answers ``/v1/chat/completions`` with memstream's
offline rules after a delay: memstream's real HTTP client (``openai:MODEL`` with ``OPENAI_BASE_URL``) and its
concurrency measured against something shaped like a remote server. The rule is chosen by the
``X-Memstream-Purpose`` header memstream's client sends."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler

import memstream.sim  # noqa: F401 - registers every stage's offline rules
from memstream.models import OfflineChatModel
from memstream.testing.server import LocalServer, chat_completion


class OfflineRulesServer(LocalServer):
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
                payload = json.dumps(chat_completion(body["model"], answer.text, answer.prompt_tokens,
                                                     answer.completion_tokens)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        super().__init__(Handler)

    def __enter__(self) -> OfflineRulesServer:
        super().__enter__()
        return self
