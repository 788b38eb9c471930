"""memstream against a real model: how much of what it says survives, per purpose. By hand, not in make test.

Runs, against the endpoint configured (``--llm openai:MODEL`` with OPENAI_BASE_URL, see the README's
local-model recipe), the CLI stages (importance of the bundled example's memories, a reflection, a
day plan with its first decomposition, interviews) and a small simulation (``--agents`` of the
default town for ``--hours`` from ``--start``), and reports per purpose: calls, seconds per call,
the share of answers used as given (valid JSON of the asked shape, or a bare rating), recovered by
the parser (read from a damaged or plain answer), retried, and lost (fell back); and behaviour:
insights per reflection, strokes per plan, conversations started and what came of the offers, interview
answers that repeat another question's, the longest activity.

    python benchmarks/real_model.py --llm openai:MODEL [--record tests/fixtures/real] [--json] [--results [FILE]]
    python benchmarks/real_model.py --llm openai:MODEL --party --out runs/party [--server-log FILE] [--json] [--results [FILE]]

``--party`` runs the shrunk party run instead (``benchmarks/party_run.py``: 4 agents, 12 simulated
hours, Isabella whispered the party): does a local run get through, what each purpose cost, the
prefix-cache share, and what emerged beside the offline rules.

With ``--record DIR`` every call (purpose, messages, answer) is written to ``DIR/calls.jsonl`` and
the simulation's call cache and config to ``DIR/run/``, so tests can replay a real model's answers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from memstream.models import HashEmbedder, make_chat_model, run_direct
from memstream.models.base import Call, ChatModel, Completion
from memstream.planning import Identity, decompose, plan_day, react, revise_stage
from memstream.reflection import parse as reflection_parse
from memstream.reflection import reflect
from memstream.sim import RunConfig, RunDir, start_run
from memstream.sim.run.layout import CALLS, CONFIG
from memstream.sim.talk import parse as sim_parse
from memstream.sim.talk.interview import interview_stage
from memstream.sim.talk.repeats import flag_repeats, repeat_count
from memstream.stream import MemoryStream, rated
from memstream.stream.jsonl import read_jsonl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, path_for, record  # benchmarks/ is not a package

STRICT: dict[str, type[BaseModel]] = {}


def _strict_models() -> dict[str, type[BaseModel]]:
    from memstream.planning import parse as planning_parse
    from memstream.planning import prompts as pp
    from memstream.reflection import prompts as rp
    from memstream.sim.talk import prompts as sp

    return {pp.DAY_PURPOSE: planning_parse.Strokes, pp.HOURS_PURPOSE: planning_parse.Hours,
            pp.ACTIONS_PURPOSE: planning_parse.Actions, pp.REACT_PURPOSE: planning_parse.Reaction,
            rp.QUESTIONS_PURPOSE: reflection_parse.Questions, rp.INSIGHTS_PURPOSE: reflection_parse.Insights,
            sp.START_PURPOSE: sim_parse.Talk, sp.TURN_PURPOSE: sim_parse.Turn, sp.SUMMARY_PURPOSE: sim_parse.Summary}


def as_given(purpose: str, text: str) -> bool:
    """Whether an answer is usable exactly as the model gave it (no recovery needed)."""
    if purpose == "importance":
        return text.strip().isdigit() and 1 <= int(text.strip()) <= 10
    model = STRICT.get(purpose)
    if model is None:
        return bool(text.strip())
    try:
        model.model_validate_json(text.strip())
        return True
    except ValueError:
        return False


class Recorder(ChatModel):
    """Passes every call to ``inner`` and keeps (purpose, messages, answer, seconds)."""

    def __init__(self, inner: ChatModel, live: Path | None = None) -> None:
        super().__init__()
        self.inner, self.name = inner, inner.name
        self.calls: list[dict[str, Any]] = []
        self.live = live  # every call is also appended here as it happens (to watch a long recording)

    def _generate(self, messages, purpose, params) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: dict[str, Any]) -> list[Completion]:
        start = time.perf_counter()
        out = self.inner._generate_many(calls, params)
        each = (time.perf_counter() - start) / max(len(calls), 1)
        for (purpose, messages), c in zip(calls, out, strict=True):
            self.calls.append({"purpose": purpose, "messages": messages, "answer": c.text,
                               "seconds": round(c.latency_s or each, 2)})
            if self.live:
                with self.live.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(self.calls[-1], ensure_ascii=False) + "\n")
        return out

    @property
    def structured_mode(self) -> str:
        return getattr(self.inner, "structured_mode", "n/a")


class Replayed(ChatModel):
    """A recording (``calls.jsonl``) answering again: the same question gets the same answer(s), in
    order, with the seconds the model took; a question not in the recording is an error."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__()
        self.name = name
        self.answers: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for line in path.read_text(encoding="utf-8").splitlines():
            c = json.loads(line)
            self.answers[json.dumps([c["purpose"], c["messages"]])].append((c["answer"], c["seconds"]))

    def _generate(self, messages, purpose, params) -> Completion:
        queue = self.answers.get(json.dumps([purpose, messages]))
        if not queue:
            raise AssertionError(f"a {purpose} call is not in the recording")
        answer, seconds = queue[0] if len(queue) == 1 else queue.pop(0)
        return Completion(answer, latency_s=seconds)


class Reused(ChatModel):
    """An earlier recording where it holds the question (the same model gave that answer to that exact
    prompt), else the live model: re-recording after a change that alters a few prompts costs only
    those calls. The report says how many answers came from each."""

    def __init__(self, recording: Replayed, live: ChatModel) -> None:
        super().__init__()
        self.recording, self.live, self.name = recording, live, live.name
        self.reused = self.asked = 0

    def _generate(self, messages, purpose, params) -> Completion:
        if self.recording.answers.get(json.dumps([purpose, messages])):
            self.reused += 1
            return self.recording._generate(messages, purpose, params)
        self.asked += 1
        return self.live._generate(messages, purpose, params)

    @property
    def structured_mode(self) -> str:
        return getattr(self.live, "structured_mode", "n/a")


def cli_stages(chat: Recorder, log: dict[str, Any]) -> None:
    """The stages a CLI user runs: importance, a reflection, a plan and its first decomposition."""
    items = read_jsonl(Path(str(files("memstream") / "examples" / "isabella.jsonl")))
    with MemoryStream(":memory:", HashEmbedder(128)) as stream:
        stream.extend(rated(chat, [it.model_copy(update={"importance": None}) for it in items]))  # rated by the model
        owner = items[0].owner
        now = stream.latest_time(owner) + timedelta(hours=1)
        result = reflect(stream, owner, now, chat=chat)
        log["reflections"].append(len(result.insights))
        me = Identity(name=owner, age=34, traits=["friendly", "outgoing"], occupation="cafe owner",
                      workplace="Hobbs Cafe", home="her apartment", wake="06:00", sleep="22:00",
                      situation="planning a Valentine's Day party at the cafe")
        plan = plan_day(stream, me, now + timedelta(days=1), chat=chat)
        log["strokes"].append(len(plan.strokes))
        waking = [b for b in plan.blocks if b.activity != "sleeping"]
        if waking:
            decompose(stream, me, plan, waking[0].start, chat=chat)
        evening = plan.day + timedelta(hours=15)
        reaction = react(stream, owner, "Maria Lopez invited Isabella Rodriguez to a book reading at the College "
                         "Library at 18:00 today", evening, chat=chat)
        log["reactions"].append(reaction.reaction)
        revision = run_direct(revise_stage(stream, me, plan.day + timedelta(days=1, hours=6)), chat)
        log["revisions"].append(revision.currently if revision else None)
        log["activities"] += [b.activity for b in plan.blocks] + [a.activity for b in plan.blocks for a in b.actions]


def simulation(chat: Recorder, args: argparse.Namespace, out: Path, log: dict[str, Any]) -> None:
    config = RunConfig(agents=args.agents, start=datetime.fromisoformat(args.start), hours=args.hours,
                       embedder="hash:128", llm=args.llm, timeout=args.timeout, concurrency=1)
    result = start_run(config, out, progress=True, chat=chat)
    run = RunDir.open(out)
    events = run.records.events()
    log["conversations"] = sum(1 for e in events if e["action"].startswith("starts a conversation"))
    log["reflections"] += [int(e["action"].split()[1]) for e in events if e["action"].startswith("reflects:")]
    log["strokes"] += [e["action"].count(";") + 1 for e in events if e["action"].startswith("plans the day")]
    log["activities"] += [e["action"] for e in events if e["agent"] and not e["action"].startswith(
        ("plans the day", "says to", "starts a", "ends the", "reflects", "reacts to", "talking with"))]
    log["sim_failures"] = result.metrics["model_failures"]
    log["sim_usage"] = result.metrics["usage"]
    log["conversation_offers"] = result.metrics.get("conversation_offers")
    with run:
        stream = run.stream
        for resident in run.town.residents[:2]:
            asked = []
            for question in ("What are you doing today?", "Who did you talk to today?"):
                answer, _ = run_direct(interview_stage(stream, resident, question, stream.latest_time(resident.name)),
                                       chat)
                asked.append((question, answer))
            log["interview_repeats"] += repeat_count(asked)  # the same answer to different questions, per agent
            log["interviews"] += [{"agent": resident.name, "question": q, "answer": a, "repeats": r}
                                  for (q, a), r in zip(asked, flag_repeats(asked), strict=True)]


def report(chat: Recorder, log: dict[str, Any]) -> dict[str, Any]:
    by: dict[str, dict[str, Any]] = defaultdict(lambda: {"calls": 0, "seconds": 0.0, "as_given": 0})
    for c in chat.calls:
        row = by[c["purpose"]]
        row["calls"] += 1
        row["seconds"] += c["seconds"]
        row["as_given"] += as_given(c["purpose"], c["answer"])
    counted: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # the CLI stages' and the run's
    for usage in (chat.usage.as_dict(), log.get("sim_usage", {})):
        for purpose, u in usage.items():
            for key in ("retried", "partial", "unusable", "failed"):
                counted[purpose][key] += u.get(key, 0)
    rows = {}
    for purpose, row in sorted(by.items()):
        u = counted[purpose]
        asked = row["calls"] - u["retried"]  # questions, not counting the retries
        lost = u["unusable"] + u["failed"]
        rows[purpose] = {"calls": row["calls"], "s_per_call": round(row["seconds"] / row["calls"], 2),
                         "used_as_given": round(row["as_given"] / row["calls"], 3),
                         "retried": u["retried"], "partial": u["partial"], "lost": lost,
                         "usable": round(1 - lost / max(asked, 1), 3)}
    longest = max((len(a.split()) for a in log["activities"]), default=0)
    return {"model": chat.name, "structured_output": chat.structured_mode, "purposes": rows,
            "insights_per_reflection": log["reflections"], "strokes_per_plan": log["strokes"],
            "conversations_started": log.get("conversations", 0),
            "conversation_offers": log.get("conversation_offers"), "interview_repeats": log.get("interview_repeats", 0),
            "longest_activity_words": longest,
            "reactions": log["reactions"], "revisions": log["revisions"],
            "interviews": log["interviews"]}


def _per_purpose(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's figures per purpose, as a results file's rows (one per purpose)."""
    return [{"purpose": purpose, **figures} for purpose, figures in result["purposes"].items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", required=True, help="openai:MODEL (OPENAI_BASE_URL names the server)")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--start", default="2023-02-13T07:00:00-08:00")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--record", metavar="DIR", help="write the calls and the run's cache here (test fixtures)")
    parser.add_argument("--replay", metavar="DIR", help="answer from a recording instead of a server (its figures "
                        "again, with this code)")
    parser.add_argument("--reuse", metavar="DIR", help="with --record: answers of an earlier recording where it "
                        "holds the exact question, the live model for the rest")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--party", action="store_true", help="the shrunk party run (4 agents, 12 simulated hours)")
    parser.add_argument("--out", metavar="DIR", help="with --party: the run directory (resumed if it is there)")
    parser.add_argument("--server-log", metavar="FILE", help="with --party: llama-cpp-python's server log, for its "
                        "prefix-cache share (that server does not put it in its responses)")
    add_results_flag(parser, "real_model")
    args = parser.parse_args()
    if args.party:
        from party_run import party_report

        out = Path(args.out or "runs/party")
        result = party_report(out, args.llm, timeout=args.timeout,
                              server_log=Path(args.server_log) if args.server_log else None)
        if args.results:  # the party run's own file (default benchmarks/results/real_party.json)
            path = path_for("real_party") if args.results == str(path_for("real_model")) else args.results
            record(path, "real_party", "The party run on a real model, per purpose", _per_purpose(result))
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    STRICT.update(_strict_models())
    live = Path(args.record) / "calls.live.jsonl" if args.record else None
    if live:
        live.parent.mkdir(parents=True, exist_ok=True)
        live.unlink(missing_ok=True)
    model = Replayed(Path(args.replay) / "calls.jsonl", args.llm) if args.replay else \
        make_chat_model(args.llm, timeout=args.timeout, concurrency=1)
    if args.reuse:
        model = Reused(Replayed(Path(args.reuse) / "calls.jsonl", args.llm), model)
    chat = Recorder(model, live)
    log: dict[str, Any] = {"reflections": [], "strokes": [], "activities": [], "interviews": [], "reactions": [],
                           "revisions": [], "interview_repeats": 0}
    started = time.perf_counter()
    cli_stages(chat, log)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        simulation(chat, args, run, log)
        if args.record:
            target = Path(args.record)
            (target / "run").mkdir(parents=True, exist_ok=True)
            for name in (CONFIG, CALLS):
                shutil.copyfile(run / name, target / "run" / name)
            with (target / "calls.jsonl").open("w", encoding="utf-8") as f:
                for c in chat.calls:
                    f.write(json.dumps(c, ensure_ascii=False) + "\n")
    result = {**report(chat, log), "sim_failures": log["sim_failures"],
              **({"answers_reused": model.reused, "answers_asked": model.asked} if args.reuse else {}),
              "model_seconds": round(sum(c["seconds"] for c in chat.calls), 1),
              "wall_s": round(time.perf_counter() - started, 1)}
    if args.record:
        (Path(args.record) / "report.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    if args.results:
        record(args.results, "real_model", "A real model's answers, per purpose", _per_purpose(result))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print(f"model {result['model']} (structured output: {result['structured_output']}), "
          f"{result['model_seconds']} s of model time, {result['wall_s']} s wall")
    print(f"{'purpose':<22}{'calls':>6}{'s/call':>8}{'as given':>10}{'retried':>9}{'partial':>9}{'lost':>6}"
          f"{'usable':>8}")
    for purpose, r in result["purposes"].items():
        print(f"{purpose:<22}{r['calls']:>6}{r['s_per_call']:>8}{r['used_as_given']:>10.0%}{r['retried']:>9}"
              f"{r['partial']:>9}{r['lost']:>6}{r['usable']:>8.0%}")
    print(f"insights per reflection {result['insights_per_reflection']}; strokes per plan "
          f"{result['strokes_per_plan']}; conversations started {result['conversations_started']}; longest "
          f"activity {result['longest_activity_words']} words")
    offers = result["conversation_offers"] or {}
    print(f"conversation offers {offers.get('made', 0)}: {offers.get('accepted', 0)} accepted, "
          f"{offers.get('declined', 0)} declined, {offers.get('busy', 0)} busy; interview answers repeating another "
          f"question's {result['interview_repeats']}")


if __name__ == "__main__":
    main()
