"""Running: a run's settings (``config``), its town (``population``) and scenario (``scenario``), the run
directory and its owners (``rundir``, ``layout``, ``checkpoints``, ``mailbox``, ``records``, ``dirlock``),
driving the clock in it (``simulate``, ``stop``, ``metrics``), and the library calls behind ``memstream run``
and its kin (``launch``)."""

from memstream.sim.run.checkpoints import Checkpoint
from memstream.sim.run.config import DEFAULT_HOURS, DEFAULT_START, FORMAT, RunConfig, RunResult
from memstream.sim.run.launch import fork_run, resume_run, scenario_run, start_run, whisper
from memstream.sim.run.layout import RunFiles
from memstream.sim.run.population import check_town
from memstream.sim.run.rundir import RunDir
from memstream.sim.run.scenario import load_scenario

__all__ = [
    "DEFAULT_HOURS", "DEFAULT_START", "FORMAT", "Checkpoint", "RunConfig", "RunDir", "RunFiles", "RunResult",
    "check_town", "fork_run", "load_scenario", "resume_run", "scenario_run", "start_run", "whisper",
]
