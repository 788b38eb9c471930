"""The letta design's tool loop against a real model: a short conversation, then a sleep-time pass.

    python benchmarks/letta_real.py --llm openai:MODEL [--record tests/fixtures/letta] [--timeout 900]

Writes :data:`CONVERSATION` (two turns: facts and a standing preference, then a fact the speaker
corrects; small because a shared 1.5B model on 2 cores takes minutes a call) into a ``letta`` design turn by turn, lets the sleep-time agent consolidate, and
reports what the model did: calls, steps, tool calls, errors by kind, heartbeats, unreadable answers,
the blocks it wrote and what it archived. With ``--record DIR`` the calls are kept in
``DIR/calls.db`` (a call cache ``tests/designs/test_letta_real.py`` replays with ``mode="replay"``) and the
report in ``DIR/report.json``. The settings (:data:`SETTINGS`) fit a 4,096-token server context.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.designs import LettaDesign, entry
from memstream.models import CachedChatModel, ChatModel, make_chat_model

T0 = datetime(2024, 3, 4, 18, 0, tzinfo=UTC)
OWNER = "maya"
CONVERSATION = [
    ("Maya", "Hi! I'm Maya, I work as a nurse in Porto, and I'm vegetarian."),
    ("Maya", "Actually, I moved to Braga last month, I don't live in Porto anymore."),
]
#: The agent model's window as the design counts it, well inside the server's 4,096 tokens; two steps a turn.
SETTINGS: dict[str, Any] = {"window_tokens": 2500, "heartbeat_limit": 2}


def entries() -> list:
    return [entry(text=f"{who}: {text}", at=T0 + timedelta(minutes=i), source=who, session="S1")
            for i, (who, text) in enumerate(CONVERSATION)]


def run(chat: ChatModel) -> dict[str, Any]:
    """The conversation written and consolidated with ``chat``; what came of it."""
    design = LettaDesign(LettaDesign.Config(**SETTINGS))
    started = time.perf_counter()
    design.write(OWNER, entries(), chat=chat)
    design.consolidate(OWNER, T0 + timedelta(hours=1), chat=chat)
    archived = [r.text for r in design.log.records(OWNER) if r.id in design.archival]
    usage = {p: {"calls": u.calls, "retried": u.retried} for p, u in chat.usage.by_purpose.items()}
    return {"model": chat.name, "settings": SETTINGS, "seconds": round(time.perf_counter() - started, 1),
            "usage": usage, "counters": design.counters(OWNER),
            "blocks": {b.label: b.value for b in design.blocks_of(OWNER)}, "archival": archived}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--llm", required=True)
    p.add_argument("--record", type=Path, help="keep the calls and the report in this folder")
    p.add_argument("--timeout", type=float, default=900, help="seconds per answer (a shared local server queues)")
    args = p.parse_args()
    chat: ChatModel = make_chat_model(args.llm, timeout=args.timeout, concurrency=1)
    if args.record:
        args.record.mkdir(parents=True, exist_ok=True)
        chat = CachedChatModel(chat, args.record / "calls.db")
    report = run(chat)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.record:
        (args.record / "report.json").write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
