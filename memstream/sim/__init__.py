"""The simulation: many agents in a small town on a simpy clock, each run kept in a run directory."""

from memstream.sim import offline as _offline_rules  # noqa: F401 - registers the dialogue and interview rules
from memstream.sim.config import DEFAULT_HOURS, DEFAULT_START, FORMAT, RunConfig, RunResult
from memstream.sim.run import fork_run, resume_run, scenario_run, start_run, whisper
from memstream.sim.rundir import Checkpoint, RunDir
from memstream.sim.whisper import Whisper

__all__ = ["DEFAULT_HOURS", "DEFAULT_START", "FORMAT", "Checkpoint", "RunConfig", "RunDir", "RunResult", "Whisper",
           "fork_run", "resume_run", "scenario_run", "start_run", "whisper"]
