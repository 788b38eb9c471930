"""A correction supersedes what it corrects (docs/offline.md, "Corrections supersede").

Scenarios of the small Fernhollow town (tests/sim/fidelity_town.py): a neighbour who heard of a picnic
at noon and then that "it is no longer at noon, it now starts at three" plans it at three; a quiz
that was called off is planned by nobody; told of a move on the day, the old appointment goes and
the new one comes; in an interview and in what is passed on, the newer statement is the one said.
"""

from __future__ import annotations

from datetime import timedelta

from memstream.models import OfflineChatModel, run_direct
from memstream.offline_events import commitment
from memstream.planning import current_plan, plan_day
from memstream.sim import interview_stage
from tests.sim.fidelity_town import GRETA, IDRIS, START, TOMAS, fresh_stream, heard, identity, residents, run, told

PICNIC = f"Greta Holm told {TOMAS} that the picnic is at Millbrook Green at noon tomorrow."
MOVED = f"Petra Novak told {TOMAS} that the picnic is no longer at noon, it now starts at three."


def test_a_change_of_time_takes_the_new_time_not_the_first_in_the_sentence() -> None:
    event = commitment("The recital is no longer at noon, it now starts at three in Old Mill Hall")
    assert event and (event.time, event.place, event.corrects) == ("15:00", "Old Mill Hall", True)
    moved = commitment("the recital at Old Mill Hall has been moved from 2 pm to 5 pm")
    assert moved and moved.time == "17:00"
    not_on = commitment("the fete isn't on Saturday, it is on Sunday at 11 am at Millbrook Green")
    assert not_on and (not_on.weekday, not_on.time) == (6, "11:00")


def test_told_of_a_move_the_next_days_plan_takes_the_new_time_only() -> None:
    stream = fresh_stream()
    told(stream, TOMAS, [PICNIC, MOVED], START + timedelta(hours=3))
    tuesday = plan_day(stream, identity(TOMAS), START + timedelta(days=1), chat=OfflineChatModel())
    appointments = [(s.time, s.location) for s in tuesday.strokes if s.appointment]
    assert appointments == [("15:00", "Millbrook Green")]
    [picnic] = [s for s in tuesday.strokes if s.appointment]
    assert stream.get(TOMAS, picnic.cites[0]).text == MOVED  # it rests on the correction


def test_a_cancelled_event_is_planned_by_nobody() -> None:
    stream = fresh_stream()
    told(stream, TOMAS, [f"Greta Holm told {TOMAS} that the pub quiz is at Old Mill Hall at 7 pm tomorrow.",
                         f"Petra Novak told {TOMAS} that the pub quiz has been called off."], START + timedelta(hours=2))
    tuesday = plan_day(stream, identity(TOMAS), START + timedelta(days=1), chat=OfflineChatModel())
    assert not [s for s in tuesday.strokes if s.appointment]


def test_told_of_a_move_on_the_day_the_old_appointment_goes_and_the_new_one_comes() -> None:
    stream = fresh_stream()
    told(stream, TOMAS, ["For my plans: go to the picnic at Millbrook Green at 12:00 on 4 March"],
         START - timedelta(hours=2))
    told(stream, GRETA, ["The picnic at Millbrook Green has been moved to 4 pm today"], START - timedelta(hours=1))
    run([TOMAS, GRETA], 1.5, stream)
    assert any("moved" in text for text in heard(stream, TOMAS))
    plan, _ = current_plan(stream, TOMAS, START + timedelta(hours=1.5))
    assert [(s.time, s.location) for s in plan.strokes if s.appointment] == [("16:00", "Millbrook Green")]


def test_the_newer_statement_is_answered_in_an_interview_and_passed_on() -> None:
    stream = fresh_stream()
    told(stream, TOMAS, [PICNIC, MOVED], START - timedelta(hours=3))
    [tomas] = residents(TOMAS)
    answer, _ = run_direct(interview_stage(stream, tomas, "When is the picnic?", START), OfflineChatModel())
    assert answer and "three" in answer and "at noon tomorrow" not in answer
    run([TOMAS, IDRIS], 1.0, stream)
    said = " ".join(heard(stream, IDRIS))
    assert "it now starts at three" in said and "at Millbrook Green at noon tomorrow" not in said
