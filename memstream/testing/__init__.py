"""Stand-ins for a model endpoint, for testing an agent offline and for measuring memstream's waiting.

memstream's own tests and benchmarks use these, and so can anyone testing their own agent without a model:

- :class:`ScriptedServer`: an OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script
  (replies, errors, stalls, headers) and records every request, to see what a client sends and does.
- :class:`ScriptedChat`: an in-process chat model answering chosen purposes from functions, the rest
  with the offline rules, recording every call.
- :class:`OfflineRulesServer`: an OpenAI-compatible HTTP server answering with the offline rules after
  a delay, so memstream's real HTTP client and its concurrency are exercised.
- :class:`LatencyChat`: the offline rules behind a delay in process, a bounded number at a time.

None of them is a language model: they answer from scripts or rules.
"""

from __future__ import annotations

from memstream.testing.latency import LatencyChat
from memstream.testing.offline_server import OfflineRulesServer
from memstream.testing.scripted_chat import ScriptedChat
from memstream.testing.scripted_server import ScriptedServer
from memstream.testing.server import LocalServer, chat_completion

__all__ = ["LatencyChat", "LocalServer", "OfflineRulesServer", "ScriptedChat", "ScriptedServer", "chat_completion"]
