"""The agents: each agent's typed state (``agent``) and the components that own a part of it: moving
(``movement``), seeing (``perception``), the objects they use (``objects``), planning and acting (``acting``),
the places they know (``spatial``), how poignant what they see is (``poignancy``), and the whispers put into
their minds (``whisper``)."""

from memstream.sim.agents.agent import Agent
from memstream.sim.agents.spatial import place_lines
from memstream.sim.agents.whisper import Whisper

__all__ = ["Agent", "Whisper", "place_lines"]
