"""The ``letta`` design: MemGPT / Letta core memory blocks, memory tools, heartbeats, the FIFO queue with
its recursive summary, recall and archival storage, and sleep-time consolidation (see :mod:`.design`)."""

from memstream.designs.letta import offline as _offline_rules  # noqa: F401 - registers the step rules
from memstream.designs.letta.blocks import BlockStore, MemoryBlock, compile_block, compile_blocks
from memstream.designs.letta.design import LettaConfig, LettaDesign
from memstream.designs.letta.parse import ToolCall, parse_tool_call
from memstream.designs.letta.tools import AGENT_TOOLS, ERRORS, SLEEPTIME_TOOLS, TOOLS, execute

__all__ = ["AGENT_TOOLS", "ERRORS", "SLEEPTIME_TOOLS", "TOOLS", "BlockStore", "LettaConfig", "LettaDesign",
           "MemoryBlock", "ToolCall", "compile_block", "compile_blocks", "execute", "parse_tool_call"]
