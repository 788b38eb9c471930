"""Planning: day plans in broad strokes, hour blocks, lazily decomposed 5-15 minute actions."""

from memstream.planning import offline as _offline_rules  # noqa: F401 - registers the planning rules
from memstream.planning.identity import Identity, RoutineItem, load_identity
from memstream.planning.newday import Revision, revise_stage
from memstream.planning.plan import SLEEPING, Action, Block, DayPlan, Stroke, appointment_span
from memstream.planning.planner import (
    ReactDecision,
    current_plan,
    decompose,
    decompose_stage,
    plan_day,
    plan_day_stage,
    react,
    react_stage,
    replan,
    replan_stage,
    routine_plan,
    start_of_day,
)

__all__ = [
    "SLEEPING", "Action", "Block", "DayPlan", "Identity", "ReactDecision", "Revision", "RoutineItem", "Stroke",
    "appointment_span", "current_plan", "decompose", "decompose_stage", "load_identity", "plan_day", "plan_day_stage",
    "react", "react_stage", "replan", "replan_stage", "revise_stage", "routine_plan", "start_of_day",
]
