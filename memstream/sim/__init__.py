"""The simulation: many agents in a small town on a simpy clock."""

from memstream.sim import offline as _offline_rules  # noqa: F401 - registers the dialogue and interview rules
