"""What every local stand-in server shares: a port of its own on 127.0.0.1, a thread serving it, and
the body of an OpenAI chat completion, so the scripted and the offline-rules servers answer alike."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from memstream.files import JsonObject

#: Seconds between the server loop's looks for a shutdown (socketserver's default is 0.5, paid on every exit).
POLL_S = 0.02


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # socketserver's default of 5 refuses a client's burst of connections


class LocalServer:
    """An HTTP server on a free port of 127.0.0.1, serving ``handler`` in a thread while in a ``with`` block.

    ``url`` is the OpenAI-style base URL (``http://127.0.0.1:PORT/v1``) to hand a client.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # shutdown() waits for serve_forever's next poll: at the default half second, every ``with`` block paid it
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_completion(model: str, content: str, prompt_tokens: int, completion_tokens: int) -> JsonObject:
    """The JSON body of a chat completion answering ``content``, with the usage it reports."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
