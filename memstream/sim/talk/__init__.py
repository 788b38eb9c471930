"""Talk: conversations between agents (``conversation``, ``offer``: whether to start one), interviews
(``interview``, ``repeats``), the recent day both draw on (``recent``), and their prompts, answer parsers and the
offline stand-in's rules (``prompts``, ``parse``, ``offline``, ``offline_judge``)."""

from memstream.sim.talk.interview import Answer, battery_stage, interview_stage, load_battery, mark_repeats
from memstream.sim.talk.repeats import flag_repeats, repeat_count

__all__ = [
    "Answer", "battery_stage", "flag_repeats", "interview_stage", "load_battery", "mark_repeats", "repeat_count",
]
