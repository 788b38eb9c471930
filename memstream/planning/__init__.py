"""Planning: day plans in broad strokes, hour blocks, lazily decomposed 5-15 minute actions."""

from memstream.planning.identity import Identity, RoutineItem, load_identity
from memstream.planning.plan import Action, Block, DayPlan, Stroke
from memstream.planning.planner import (
    ReactDecision,
    current_plan,
    decompose,
    plan_day,
    react,
    react_prompt,
    replan,
    start_of_day,
)

__all__ = ["Action", "Block", "DayPlan", "Identity", "ReactDecision", "RoutineItem", "Stroke", "current_plan",
           "decompose", "load_identity", "plan_day", "react", "react_prompt", "replan", "start_of_day"]
