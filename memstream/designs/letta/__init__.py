"""The ``letta`` design: MemGPT / Letta core memory blocks, memory tools, heartbeats, the FIFO queue with
its recursive summary, recall and archival storage, and sleep-time consolidation (see :mod:`.design`)."""

from memstream.designs.letta import offline as _offline_rules  # noqa: F401 - registers the step rules
from memstream.designs.letta.blocks import MemoryBlock
from memstream.designs.letta.design import LettaConfig, LettaDesign

__all__ = ["LettaConfig", "LettaDesign", "MemoryBlock"]
