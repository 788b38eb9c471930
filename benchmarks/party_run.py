"""The shrunk party run against a real model: does a local run get through its hours, and what emerges.

The first 4 residents of the default town, 12 simulated hours from 08:00 on 13 February, Isabella
whispered the bundled valentine scenario's party. Driven by ``benchmarks/real_model.py --party``;
the run directory (``--out``) is resumable, so a run that needs more than one sitting goes on where
it stopped (the call cache replays every answer already had).

Reported: wall time; per purpose the answers received, seconds per answer, the longest answer
against its bound, truncated, abandoned, retried, refused by a sense check (implausible), salvaged
and lost answers and the usable share; the importance histogram and re-plans per 100 rated
observations; conversation offers accepted and declined; the share
of prompt tokens served from the server's prefix cache (from the responses where the server says
so, else from llama-cpp-python's log with ``--server-log``); and what happened (who knows of the
party, who planned for it, conversations, the agents' own answers in an interview), beside the
offline rules on the same set-up.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.models import CachedChatModel, ChatModel, answer_tokens, make_chat_model, run_direct
from memstream.sim import (
    RunConfig,
    RunDir,
    RunFiles,
    Whisper,
    interview_stage,
    load_scenario,
    measures,
    resume_run,
    start_run,
)
from memstream.sim.run.layout import CALLS

AGENTS = 4
HOURS = 12.0
START = "2023-02-13T08:00:00-08:00"
FACT = "Valentine's Day party"
QUESTION = "What are you doing on Valentine's Day?"
#: llama-cpp-python's server logs, per request: "Llama.generate: 24 prefix-match hit, remaining 310 prompt tokens".
PREFIX_LINE = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")


def party_whisper() -> Whisper:
    """Isabella's whisper, as the bundled valentine scenario gives it."""
    scenario = load_scenario("valentine")
    told = next(w for w in scenario.whispers if "party" in w.text)
    return Whisper(id=1, agent=told.agent, text=told.text, at=datetime.fromisoformat(START))


def run_party(out: Path, llm: str, *, timeout: float, embedder: str = "hash:128", progress: bool = True,
              chat: ChatModel | None = None) -> dict:
    """Start the party run in ``out``, or go on with it if it is there; its metrics. ``chat`` replaces the
    model ``llm`` names (a benchmark's wrapper)."""
    if RunFiles(out).is_run:
        return resume_run(out, progress=progress).metrics
    config = RunConfig(agents=AGENTS, start=datetime.fromisoformat(START), hours=HOURS, embedder=embedder,
                       llm=llm, timeout=timeout, concurrency=1)
    return start_run(config, out, progress=progress, chat=chat, whispers=[party_whisper()]).metrics


def longest_answers(run: Path) -> dict[str, int]:
    """The longest answer per purpose in the run's call cache, in completion tokens."""
    with closing(sqlite3.connect(f"file:{run / 'calls.db'}?mode=ro", uri=True)) as db:
        return dict(db.execute("SELECT purpose, MAX(completion_tokens) FROM calls GROUP BY purpose").fetchall())


def server_log_share(log: Path, since: int) -> dict[str, Any]:
    """The prefix-cache share llama-cpp-python's server logged after byte ``since`` of its log."""
    text = log.read_bytes()[since:].decode("utf-8", errors="replace")
    pairs = [(int(a), int(b)) for a, b in PREFIX_LINE.findall(text)]
    hit = sum(a for a, _ in pairs)
    total = hit + sum(b for _, b in pairs)
    return {"requests": len(pairs), "prompt_tokens": total, "share": round(hit / total, 4) if total else None}


def per_purpose(metrics: dict, longest: dict[str, int]) -> dict[str, dict[str, Any]]:
    rows = {}
    for purpose, u in sorted(metrics["usage"].items()):
        asked = max(u["calls"] - u["retried"], 1)
        rows[purpose] = {"answers": u["received"], "s_per_answer": round(u["latency_s"] / max(u["received"], 1), 2),
                         "longest_tokens": longest.get(purpose, 0), "bound": answer_tokens(purpose),
                         "truncated": u["truncated"], "abandoned": u["abandoned"], "retried": u["retried"],
                         "implausible": u.get("implausible", 0), "partial": u["partial"],
                         "lost": u["unusable"] + u["failed"], "usable": round(1 - (u["unusable"] + u["failed"]) / asked, 3),
                         "prefix_cache_share": _share(u)}
    return rows


def _share(u: dict[str, Any]) -> float | None:
    reported = u.get("prefix_reported_tokens", 0)
    return round(u.get("prefix_cached_tokens", 0) / reported, 3) if reported else None


def ratings(metrics: dict, events: list[dict]) -> dict[str, Any]:
    """What the model's importance ratings looked like and what they set off: the observations' histogram,
    its distinct values, and re-plans (reactions) per 100 rated observations."""
    histogram = {int(k): v for k, v in (metrics.get("importance_histogram") or {}).items()}
    rated = sum(histogram.values())
    reactions = sum(1 for e in events if e["action"].startswith("reacts to "))
    return {"histogram": histogram, "distinct": sum(1 for v in histogram.values() if v), "rated": rated,
            "reactions": reactions, "reactions_per_100": round(100 * reactions / rated, 1) if rated else None}


def what_happened(out: Path, llm: str, *, timeout: float) -> dict[str, Any]:
    """Who knows of the party, who planned for it, conversations, each agent's own answer in an interview
    (asked through the run's call cache, so a recording holds them too), and the model's ratings."""
    run = RunDir.open(out)
    party_day = datetime.fromisoformat(START).replace(hour=0, minute=0) + timedelta(days=1)
    events = run.records.events()
    answers = {}
    with run:
        chat = CachedChatModel(make_chat_model(llm, timeout=timeout, concurrency=1), out / CALLS)
        stream = run.stream
        for resident in run.town.residents:
            answer, _ = run_direct(interview_stage(stream, resident, QUESTION, run.stands_at()), chat)
            answers[resident.name] = answer
        chat.close()
    metrics = run.records.metrics() or {}
    return {"knowers": sorted(measures.knowers(run, FACT)),
            "planned": sorted(measures.planned(run, "Hobbs Cafe", party_day + timedelta(hours=17),
                                               party_day + timedelta(hours=19))),
            "conversations": sum(1 for e in events if e["action"].startswith("starts a conversation")),
            "conversation_offers": metrics.get("conversation_offers"),
            "importance": ratings(metrics, events),
            "reflection": metrics.get("reflection"),  # insights written, and dropped by each sense check
            "model_failures": metrics.get("model_failures"),
            "implausible": metrics.get("implausible_by_purpose", {}),
            "interviews": answers}


def party_report(out: Path, llm: str, *, timeout: float, server_log: Path | None, progress: bool = True) -> dict:
    """Run (or go on with) the party run and report it, beside the offline rules on the same set-up."""
    since = server_log.stat().st_size if server_log else 0
    metrics = run_party(out, llm, timeout=timeout, progress=progress)
    report = {"llm": llm, "stopped": metrics["stopped"], "wall_s": metrics["wall_s"],
              "sim_hours": metrics["sim_hours"], "structured_output": metrics.get("structured_output"),
              "structured_probe": metrics.get("structured_probe"),
              "prefix_cache_share": metrics.get("prefix_cache_share"),
              "purposes": per_purpose(metrics, longest_answers(out)),
              "happened": what_happened(out, llm, timeout=timeout)}
    if server_log:
        report["server_log_prefix_share"] = server_log_share(server_log, since)
    with tempfile.TemporaryDirectory() as tmp:
        offline = Path(tmp) / "offline"
        run_party(offline, "offline", timeout=timeout, progress=progress)
        report["offline"] = what_happened(offline, "offline", timeout=timeout)
    return report
