"""The simulation: many agents in a small town on a simpy clock, each run kept in a run directory.

Its rooms, lowest first (``tests/test_layering.py`` holds the order): ``state`` and ``events`` (typed state,
the event log), ``town/`` (places, residents, what is seen where), ``agents/`` (each agent's state and the
components that own it), ``talk/`` (conversations and interviews), ``engine`` (the clock driving every agent's
step), ``run/`` (settings, the run directory, driving a run), ``analysis/`` (the paper's measures, provenance).
"""

from memstream.sim.agents import Whisper, place_lines
from memstream.sim.analysis import (
    Attendance,
    Diffusion,
    InterviewAnswer,
    Network,
    downstream,
    measures,
    provenance,
    source_of,
)
from memstream.sim.run import (
    DEFAULT_HOURS,
    DEFAULT_START,
    FORMAT,
    Checkpoint,
    RunConfig,
    RunDir,
    RunFiles,
    RunResult,
    check_town,
    fork_run,
    load_scenario,
    resume_run,
    scenario_run,
    start_run,
    whisper,
)
from memstream.sim.talk import (
    Answer,
    battery_stage,
    flag_repeats,
    interview_stage,
    load_battery,
    mark_repeats,
    repeat_count,
)
from memstream.sim.talk import offline as _offline_rules  # noqa: F401 - registers the dialogue and interview rules
from memstream.sim.town import Map

__all__ = [
    "DEFAULT_HOURS", "DEFAULT_START", "FORMAT", "Answer", "Attendance", "Checkpoint", "Diffusion", "InterviewAnswer",
    "Map", "Network", "RunConfig", "RunDir", "RunFiles", "RunResult", "Whisper", "battery_stage", "check_town",
    "downstream", "flag_repeats", "fork_run", "interview_stage", "load_battery", "load_scenario", "mark_repeats",
    "measures", "place_lines", "provenance", "repeat_count", "resume_run", "scenario_run", "source_of", "start_run",
    "whisper",
]
