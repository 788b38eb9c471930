"""Planning: the day covered without gaps, lazy decomposition, re-planning that keeps the past, parsing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.models.openai_backend import OpenAIChat
from memstream.planning import Identity, current_plan, decompose, load_identity, plan_day, react
from memstream.planning.plan import Block, fit_actions
from memstream.stream import MemoryStream
from memstream.testing import ScriptedServer

OFFLINE = OfflineChatModel()
TZ = timezone(timedelta(hours=-8))
DAY = datetime(2023, 2, 13, tzinfo=TZ)
KLAUS = Identity(name="Klaus Mueller", age=20, traits=["curious"], occupation="student", workplace="Oak Hill College",
                 home="Klaus's apartment", wake="06:30", sleep="22:30")


def _covers_without_gaps(blocks, start, end) -> None:
    assert blocks[0].start == start and blocks[-1].end == end
    for a, b in zip(blocks, blocks[1:], strict=False):
        assert a.end == b.start and a.minutes > 0


def test_day_plan_covers_the_day_and_is_a_memory(stream: MemoryStream) -> None:
    plan = plan_day(stream, KLAUS, DAY + timedelta(hours=5), chat=OFFLINE)
    assert 5 <= len(plan.strokes) <= 8
    assert [s.time for s in plan.strokes] == sorted(s.time for s in plan.strokes)
    _covers_without_gaps(plan.blocks, DAY, DAY + timedelta(days=1))
    assert plan.block_at(DAY + timedelta(hours=3)).activity == "sleeping"
    assert "Oak Hill College" in {b.location for b in plan.blocks}
    memory = stream.get(KLAUS.name, plan.memory_id)
    assert memory.kind == "plan" and memory.text.startswith("Plan for Monday 13 February 2023")
    found = stream.retrieve(KLAUS.name, "Klaus plan for Monday", now=DAY + timedelta(hours=6), k=3, touch=False)
    assert plan.memory_id in [r.memory.id for r in found]


def test_only_the_block_entered_is_decomposed(stream: MemoryStream) -> None:
    plan = plan_day(stream, KLAUS, DAY, chat=OFFLINE)
    t = DAY + timedelta(hours=9, minutes=20)
    assert plan.action_at(t) is None
    block = decompose(stream, KLAUS, plan, t, chat=OFFLINE)
    _covers_without_gaps(block.actions, block.start, block.end)
    assert all(5 <= a.minutes <= 15 for a in block.actions)
    assert plan.action_at(t).start <= t < plan.action_at(t).end
    assert sum(1 for b in plan.blocks if b.actions) == 1
    calls = OFFLINE.usage.by_purpose["planning.actions"].calls
    decompose(stream, KLAUS, plan, t + timedelta(minutes=10), chat=OFFLINE)
    assert OFFLINE.usage.by_purpose["planning.actions"].calls == calls  # once per block


@pytest.mark.parametrize("proposed", [[], [(60, "a", "")], [(3, "a", ""), (40, "b", "")], [(7, "a", "")] * 20])
def test_actions_fill_a_block_exactly_in_5_to_15_minutes(proposed) -> None:
    for minutes in (60, 37, 17, 6):
        block = Block(DAY, minutes, "study", "library")
        actions = fit_actions(block, proposed)
        _covers_without_gaps(actions, block.start, block.end)
        assert all(5 <= a.minutes <= 15 for a in actions)
    assert [a.minutes for a in fit_actions(Block(DAY, 3, "x", "y"), proposed)] == [3]


def test_replanning_keeps_the_past_and_cites_the_old_plan(tmp_path) -> None:
    path = tmp_path / "s.db"
    with MemoryStream(path, HashEmbedder(64)) as s:
        plan = plan_day(s, KLAUS, DAY, chat=OFFLINE)
        decompose(s, KLAUS, plan, DAY + timedelta(hours=9), chat=OFFLINE)
        quiet = react(s, KLAUS.name, "the bookshelf is tidy", DAY + timedelta(hours=9, minutes=5), chat=OFFLINE)
        assert not quiet.react and quiet.plan.memory_id == plan.memory_id
    with MemoryStream(path) as s:  # the plan is read back from the stream
        now = DAY + timedelta(hours=9, minutes=37, seconds=20)
        before, _ = current_plan(s, KLAUS.name, now)
        assert before.block_at(now).actions
        decision = react(s, KLAUS.name, "the kitchen is on fire", now, chat=OFFLINE)
        assert decision.react
        new = decision.plan
        cut = DAY + timedelta(hours=9, minutes=37)
        past_old = [b for b in before.blocks if b.end <= cut]
        assert [(b.start, b.activity) for b in new.blocks[: len(past_old)]] == [(b.start, b.activity) for b in past_old]
        current = new.block_at(cut - timedelta(minutes=1))
        assert current.end == cut and current.actions and current.actions[-1].end == cut
        assert new.block_at(cut).activity.startswith("stop and see to")
        _covers_without_gaps(new.blocks, DAY, DAY + timedelta(days=1))
        memory = s.get(KLAUS.name, new.memory_id)
        assert memory.cites == (before.memory_id,) and memory.metadata["supersedes"] == before.memory_id
        assert current_plan(s, KLAUS.name, now)[0].memory_id == new.memory_id


def test_identity_files_are_checked(tmp_path) -> None:
    good = tmp_path / "k.json"
    good.write_text(KLAUS.model_dump_json())
    assert load_identity(good) == KLAUS
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "X", "age": "old"}))
    with pytest.raises(MemstreamError, match="bad identity: age"):
        load_identity(bad)
    bad.write_text(json.dumps({"name": "X", "age": 3, "wake": "23:00", "sleep": "07:00"}))
    with pytest.raises(MemstreamError, match="must come before sleep"):
        load_identity(bad)


@pytest.mark.slow
def test_planning_over_the_openai_backend_with_a_malformed_answer(stream: MemoryStream) -> None:
    strokes = "\n".join(f"{h:02d}:00 {a} ({loc})" for h, a, loc in [
        (7, "wake up", "home"), (8, "study", "library"), (12, "lunch", "cafe"), (14, "study", "library"),
        (19, "dinner", "home"), (22, "sleep", "home")])
    script = [(200, "I would rather not say."), (200, strokes),               # day: malformed, then plain text
              (200, json.dumps({"hours": [{"hour": h, "activity": "write a paper" if h == 9 else "read",
                                           "location": "library"} for h in range(7, 22) if h != 10]})),
              (200, "4")]                                                     # importance of the plan memory
    with ScriptedServer(script) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", backoff_s=0.01)
        plan = plan_day(stream, KLAUS, DAY, chat=chat)
    assert [s.activity for s in plan.strokes][:2] == ["wake up", "study"]
    assert plan.block_at(DAY + timedelta(hours=9)).activity == "write a paper"
    assert plan.block_at(DAY + timedelta(hours=10)).activity == "study"      # left out: the stroke in force
    assert plan.block_at(DAY + timedelta(hours=23)).activity == "sleeping"   # after bedtime
    assert chat.usage.by_purpose["planning.day"].calls == 2


def test_the_day_plan_recalls_the_day_before_not_the_most_poignant_past() -> None:
    from memstream.planning.planner import _yesterday

    s = MemoryStream(":memory:", HashEmbedder(64))
    for days_back in (3, 4, 5, 6, 7, 8):  # poignant, and long ago
        s.add(KLAUS.name, f"Klaus won a prize {days_back} days back", at=DAY - timedelta(days=days_back, hours=-12),
              importance=10)
    s.add(KLAUS.name, "Klaus read a paper in the library", at=DAY - timedelta(hours=10), importance=2)
    summary = _yesterday(s, KLAUS, DAY + timedelta(hours=6, minutes=30))
    assert summary.startswith("Klaus read a paper in the library")


def test_a_plan_survives_its_json_form(stream: MemoryStream) -> None:
    from memstream.planning.plan import DayPlan

    plan = plan_day(stream, KLAUS, DAY + timedelta(hours=5), chat=OFFLINE)
    decompose(stream, KLAUS, plan, plan.blocks[7].start, chat=OFFLINE)
    data = json.loads(json.dumps(plan.to_dict()))
    assert DayPlan.from_dict(data) == plan and any(b["actions"] for b in data["blocks"])
