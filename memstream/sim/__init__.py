"""The simulation: many agents in a small town on a simpy clock, each run kept in a run directory."""

from memstream.sim import measures  # the measures of a run, as one namespace (measures.diffusion, ...)
from memstream.sim import offline as _offline_rules  # noqa: F401 - registers the dialogue and interview rules
from memstream.sim.config import DEFAULT_HOURS, DEFAULT_START, FORMAT, RunConfig, RunResult
from memstream.sim.interview import Answer, battery_stage, interview_stage, load_battery, mark_repeats
from memstream.sim.provenance import downstream, provenance, source_of
from memstream.sim.repeats import flag_repeats, repeat_count
from memstream.sim.run import fork_run, resume_run, scenario_run, start_run, whisper
from memstream.sim.rundir import Checkpoint, RunDir
from memstream.sim.scenario import load_scenario
from memstream.sim.spatial import place_lines
from memstream.sim.whisper import Whisper
from memstream.sim.world import Map

__all__ = [
    "DEFAULT_HOURS", "DEFAULT_START", "FORMAT", "Answer", "Checkpoint", "Map", "RunConfig", "RunDir", "RunResult",
    "Whisper", "battery_stage", "fork_run", "interview_stage", "load_battery", "load_scenario", "measures",
    "place_lines", "resume_run", "scenario_run", "start_run", "whisper", "downstream", "provenance", "source_of",
    "flag_repeats", "mark_repeats", "repeat_count",
]
