"""The facts design's write path against a real model: what it extracts and how it classifies. By hand.

Writes a short hand-written conversation (a user telling an assistant about a new job, then
correcting its deadline two days later; no benchmark data; two turns, as the shared local model
took five to seven minutes an extraction) into the ``facts``
design through ``--llm`` (see the README's local-model recipe), then assembles the context for three
questions, and reports per purpose the calls, seconds and lost answers, the facts written with their
actions, and the contexts. With ``--record DIR`` the model's answers go to ``DIR/calls.db`` (the call
cache, replayed by ``tests/designs/test_facts_real.py`` with ``mode="replay"``) and the report to
``DIR/report.json``.

    python benchmarks/facts_real.py --llm openai:MODEL [--record tests/fixtures/facts_real] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.designs import FactsDesign, entry, make_design
from memstream.models import ChatModel, HashEmbedder, make_chat_model
from memstream.models.cache import CachedChatModel

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OWNER = "user"
#: (day, text): what the user said, each with the assistant's reply, as LongMemEval writes a round.
CONVERSATION = [
    (0, "user: Hi! I just started a new job as a data engineer at Northwind, and my first project deadline is "
        "Thursday March 12.\nassistant: Congratulations on the new job! Good luck with the project."),
    (2, "user: Bad news: my project deadline moved to Monday March 16.\nassistant: That gives you a few more "
        "days at least."),
]
QUESTIONS = ["When is my project deadline?", "Where do I work?", "When was my deadline originally?"]


def run(chat: ChatModel) -> dict[str, Any]:
    design: FactsDesign = make_design("facts", embedder=HashEmbedder(256))  # the embedder is not what is measured
    started = time.perf_counter()
    for day, text in CONVERSATION:
        design.write(OWNER, [entry(text=text, at=T0 + timedelta(days=day, minutes=len(text)), session=f"d{day}")],
                     chat=chat)
    seconds = time.perf_counter() - started
    rows = design.store.db.execute("SELECT id, text, kind, is_latest FROM facts ORDER BY id").fetchall()
    edges = design.store.db.execute("SELECT src, kind, dst FROM edges ORDER BY src").fetchall()
    now = T0 + timedelta(days=4)
    return {
        "model": chat.name, "seconds": round(seconds, 1), "turns": len(CONVERSATION),
        "usage": {p: {"calls": u.calls, "retried": u.retried, "lost": u.lost, "latency_s": round(u.latency_s, 1),
                      "completion_tokens": u.completion_tokens}
                  for p, u in sorted(chat.usage.by_purpose.items())},
        "facts": [{"id": i, "text": t, "kind": k, "current": bool(c)} for i, t, k, c in rows],
        "edges": [list(e) for e in edges],
        "contexts": {q: design.context(OWNER, q, now, 400).text for q in QUESTIONS},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--llm", required=True, help="openai:MODEL (or offline, to try the script)")
    p.add_argument("--record", type=Path, help="write the call cache and the report into this folder")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    chat = make_chat_model(args.llm, timeout=900, concurrency=1)
    if args.record:
        args.record.mkdir(parents=True, exist_ok=True)
        chat = CachedChatModel(chat, args.record / "calls.db")
    report = run(chat)
    if args.record:
        (args.record / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['model']}: {report['turns']} turns in {report['seconds']} s")
    for purpose, u in report["usage"].items():
        print(f"  {purpose:<16} {u['calls']} calls, {u['retried']} retried, {u['lost']} lost, {u['latency_s']} s")
    for f in report["facts"]:
        print(f"  {f['id']:>3} {'current ' if f['current'] else 'replaced'} {f['kind']:<10} {f['text']}")
    print(f"  edges: {report['edges']}")


if __name__ == "__main__":
    main()
