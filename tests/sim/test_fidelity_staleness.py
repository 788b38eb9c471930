"""An event whose time has passed stops driving plans and retelling (docs/offline.md, "Staleness").

Scenarios of the small Fernhollow town (tests/sim/fidelity_town.py): a barn dance two days gone is not
passed on, makes no planning thought nor appointment, and no "has heard of ... N times" insight;
it stays in memory and an interview about it still answers from it.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta

from memstream.models import OfflineChatModel, run_direct
from memstream.offline_events import commitment
from memstream.offline_news import is_past
from memstream.reflection import prompts as reflection_prompts
from memstream.reflection.offline import answer_insights
from memstream.sim import interview_stage
from tests.sim.fidelity_town import (
    IDRIS,
    START,
    TOMAS,
    TZ,
    fresh_stream,
    heard,
    planning_thoughts,
    residents,
    run,
    told,
)

DANCE = "barn dance"
GONE = [f"Petra Novak told {IDRIS} that the {DANCE} is at Old Mill Hall on March 2nd at 8 pm.",
        f"Greta Holm told {IDRIS} that the {DANCE} is at Old Mill Hall on March 2nd at 8 pm."]


def test_an_event_is_past_after_its_end() -> None:
    event = commitment("the pottery sale at the hall from 2 to 4 pm on Monday")
    assert event is not None
    monday = date(2024, 3, 4)
    assert not is_past(event, monday, datetime(2024, 3, 4, 15, tzinfo=TZ))
    assert is_past(event, monday, datetime(2024, 3, 4, 16, tzinfo=TZ))
    assert is_past(event, monday, date(2024, 3, 5)) and not is_past(event, monday, monday)


def test_a_dance_two_days_gone_is_not_passed_on_nor_planned() -> None:
    stream = fresh_stream()
    told(stream, IDRIS, GONE, START - timedelta(days=2, hours=12))
    sim, _ = run([TOMAS, IDRIS], 1.0, stream)
    assert heard(stream, TOMAS)  # they talked
    assert not [t for t in heard(stream, TOMAS) + planning_thoughts(stream, TOMAS) if DANCE in t]
    assert not [s for s in sim.agents[IDRIS].mind.plan.strokes if s.appointment]
    [idris] = residents(IDRIS)  # still remembered, and answered about
    answer, _ = run_direct(interview_stage(stream, idris, "What do you know about the barn dance?", START),
                           OfflineChatModel())
    assert answer and DANCE in answer


def _insights(statements: list[str]) -> list[str]:
    answer = answer_insights(reflection_prompts.insights_messages(IDRIS, statements))
    return [i["insight"] for i in json.loads(answer)["insights"]]


def test_no_has_heard_of_insight_about_a_date_long_gone() -> None:
    plan = "Plan for {day}: 06:00 wake up (Willow Lane cottages); 07:00 bake bread (Heron Bakery)"
    before = _insights([plan.format(day="Friday 1 March 2024"), *GONE])
    assert any("has heard of the barn dance" in i for i in before)  # still to come on the 1st
    after = _insights([plan.format(day="Monday 4 March 2024"), *GONE])
    assert not any("barn dance" in i for i in after)
