"""A real model's answers to the profile design's prompts (summariser, updater, compaction's merge, the safety
check) on one scripted turn, recorded for the tests to replay.

    python benchmarks/profile_real.py --llm openai:model.gguf --record tests/fixtures/real_profile [--cache FILE]
    python benchmarks/profile_real.py --llm openai:model.gguf --replay tests/fixtures/real_profile

One turn (who the user is, a standing preference, the assistant's reply) updates a file already near a
lowered ``compact_at``: the summary, the edits (not retried: a slow shared server) and the safety check
on each new text are the model's. The same turn is then run again with its edit given (``Given``), so
the file would pass ``compact_at`` whatever the model's own edits were; and once more with the safety
check answered by its offline rules (a gate may be another model than the updater's), so compaction asks
the model to merge.
With ``--record DIR`` every call is written to ``DIR/calls.jsonl`` (purpose, messages, answer, seconds)
and what came of it to ``DIR/report.json``; ``--cache FILE`` keeps every answer as it comes (a call
cache), so a recording cut short goes on from there when run again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.designs import entry, make_design
from memstream.designs.profile.prompts import UPDATE_PURPOSE
from memstream.models import CachedChatModel, ChatModel, OfflineChatModel, make_chat_model, run_direct
from memstream.models.base import Completion
from memstream.trust import GATE_PURPOSE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_model import Recorder, Replayed  # the recorder the other recordings use

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OWNER = "maya"
TURNS = [
    ("user", "turn", "Hi, I'm Maya, a data engineer in Lisbon. Please always keep answers short."),
    ("assistant", "turn", "Got it, Maya: short answers."),
]
#: A file just under the lowered compaction threshold (``SETTINGS``), with lines that say one thing twice:
#: any line the turn adds takes it past.
FULL = """# profile
- Works from home on Fridays.
- Works remotely on Fridays.
# goals
- Migrate the billing pipeline from Airflow to Dagster by September.
  - checkpoint: the first three assets are ported.
  - checkpoint: three assets ported to Dagster.
# projects
- Billing pipeline migration from Airflow to Dagster.
- The billing pipeline is being moved to Dagster.
- Uses dbt for the billing models.
- dbt models the billing tables.
# assets
- A staging cluster on Kubernetes.
- Kubernetes staging cluster for the pipelines.
- A laptop with 32 GB of memory.
# conventions
- [user] Keep answers short.
- Prefers short answers.
# corrections
- The deadline is September, not June.
"""
SETTINGS = {"compact_at": 700, "compact_to": 600, "cap_chars": 1500, "retries": 0}


def entries() -> list[Any]:
    return [entry(text=text, at=T0 + timedelta(minutes=i), source=source, kind=kind)
            for i, (source, kind, text) in enumerate(TURNS)]


class Given(ChatModel):
    """Answers ``purpose`` with a fixed answer, everything else with ``inner``: the edit compaction needs is
    given, so the model's merge and checks are asked whatever its own edits were."""

    def __init__(self, inner: ChatModel, answers: dict[str, str | ChatModel]) -> None:
        super().__init__()
        self.inner, self.name, self.answers = inner, inner.name, answers

    def _generate(self, messages, purpose, params) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls, params) -> list[Completion]:
        asked = [c for c in calls if c[0] not in self.answers]
        answered = iter(self.inner._generate_many(asked, params) if asked else [])
        return [self._given(p, m, params) if p in self.answers else next(answered) for p, m in calls]

    def _given(self, purpose: str, messages: list, params: dict) -> Completion:
        answer = self.answers[purpose]
        return Completion(answer) if isinstance(answer, str) else answer._generate(messages, purpose, params)


#: The edit given for the compaction's turn (the model's own is asked in the first part).
GIVEN_EDIT = json.dumps({"edits": [{"op": "add", "after": "# profile",
                                    "text": "- [user] Maya is a data engineer in Lisbon."}]})


def conversation(chat: ChatModel) -> dict[str, Any]:
    """The scripted turn on the nearly full file, answered by ``chat``; then the same turn with its edit
    given, so compaction asks ``chat`` to merge and to check the result; what came of both."""
    design = make_design("profile", **SETTINGS)
    design.store.append(OWNER, design.config.scope, 0, FULL, {"edits": []}, T0.isoformat(), [])
    run_direct(design.write_stage(OWNER, entries()), chat)
    given = make_design("profile", **SETTINGS)
    given.store.append(OWNER, given.config.scope, 0, FULL, {"edits": []}, T0.isoformat(), [])
    run_direct(given.write_stage(OWNER, entries()), Given(chat, {UPDATE_PURPOSE: GIVEN_EDIT}))
    merged = make_design("profile", **SETTINGS)
    merged.store.append(OWNER, merged.config.scope, 0, FULL, {"edits": []}, T0.isoformat(), [])
    run_direct(merged.write_stage(OWNER, entries()), Given(chat, {UPDATE_PURPOSE: GIVEN_EDIT,
                                                                  GATE_PURPOSE: OfflineChatModel()}))
    return {"file": design.file(OWNER), "edits": [v.edit for v in design.versions(OWNER)][1:],
            "counters": design.counters(), "given_edit_counters": given.counters(),
            "compacted_file": merged.file(OWNER), "compaction": [v.edit for v in merged.versions(OWNER)][1:],
            "compaction_counters": merged.counters()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", required=True, help="openai:MODEL (the local server)")
    parser.add_argument("--record", metavar="DIR", help="write the calls and the report here (test fixtures)")
    parser.add_argument("--replay", metavar="DIR", help="answer from a recording instead of a server")
    parser.add_argument("--cache", metavar="FILE", help="a call cache that keeps answers as they come")
    args = parser.parse_args()
    name = args.llm.removeprefix("openai:")
    inner = Replayed(Path(args.replay) / "calls.jsonl", name) if args.replay else make_chat_model(args.llm)
    chat = Recorder(CachedChatModel(inner, args.cache) if args.cache else inner)
    started = time.perf_counter()
    result = conversation(chat) | {"model": chat.name, "calls": len(chat.calls),
                                   "model_seconds": round(sum(c["seconds"] for c in chat.calls), 1),
                                   "wall_seconds": round(time.perf_counter() - started, 1)}
    if args.record:
        target = Path(args.record)
        target.mkdir(parents=True, exist_ok=True)
        with (target / "calls.jsonl").open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(c, ensure_ascii=False) + "\n" for c in chat.calls)
        (target / "report.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
