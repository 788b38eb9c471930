"""The Letta design's prompts: the agent's step and the sleep-time agent's, in MemGPT's shape.

The system message holds the instructions, the tools, the compiled core memory blocks, the memory
metadata (what is in recall and archival storage) and, once messages were evicted, the recursive
summary in MemGPT's words. The FIFO queue follows as chat messages. Tool results, heartbeats and
system alerts are sent as user messages with a prefix (a plain chat endpoint has no tool role
without a tools API), as MemGPT did for models without function calling.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memstream.designs.letta.parse import ToolCallAnswer
from memstream.designs.letta.tools import AGENT_TOOLS, SLEEPTIME_TOOLS, TOOLS
from memstream.models import Message, register_answer_schema, register_answer_tokens, register_answer_tools

VERSION = 1
STEP_PURPOSE = "letta-step"
SLEEPTIME_PURPOSE = "letta-sleeptime"
#: A step answers one tool call (a line to store is short); the sleep-time agent may rewrite a whole
#: block (5,000 characters, about 1,300 tokens).
register_answer_tokens({STEP_PURPOSE: 400, SLEEPTIME_PURPOSE: 1500})
register_answer_schema(STEP_PURPOSE, ToolCallAnswer)
register_answer_schema(SLEEPTIME_PURPOSE, ToolCallAnswer)
#: Where the endpoint has a tools API the tools go through it too (the prompt still describes them).
register_answer_tools(STEP_PURPOSE, [TOOLS[t].spec() for t in AGENT_TOOLS])
register_answer_tools(SLEEPTIME_PURPOSE, [TOOLS[t].spec() for t in SLEEPTIME_TOOLS])

#: Prefixes of the queue's non-conversation messages (one source for the prompt and the offline rules).
TOOL_RESULT = "[function return]"
HEARTBEAT = "[heartbeat]"
ALERT = "[system alert]"
SUMMARY_NOTE = "Note: prior messages ({n}) have been hidden from view due to conversation memory constraints."

#: MemGPT's memory-pressure warning (MESSAGE_SUMMARY_WARNING_STR).
WARNING = (f"{ALERT} Warning: the conversation history will soon reach its maximum length and be trimmed. "
           "Make sure to save any important information from the conversation to your memory before it is removed.")
HEARTBEAT_OK = f"{HEARTBEAT} Function called using request_heartbeat=true, returning control."
HEARTBEAT_FAILED = f"{HEARTBEAT} Function call failed, returning control."

CALL_FORMAT = ('Answer with exactly one tool call as one JSON object and nothing else: {"tool": NAME, '
               '"arguments": {...}, "request_heartbeat": true or false}. Set request_heartbeat to true only '
               "if you need another step after this call (to make another call).")

AGENT = (
    "You are a memory-augmented agent with a memory system (MemGPT / Letta). Your core memory blocks below are "
    "always in view; they are limited in size, so keep them to what stays useful: who the people are, their "
    "facts, preferences and plans. Older messages leave your view as the conversation grows; they stay in "
    "recall storage (conversation_search). Archival memory is unlimited storage you search yourself. "
    "{listening}Edit your memory with the tools."
)
LISTENING = ("You are listening to a conversation between other people; you do not take part. Keep what is worth "
             "remembering about them; when there is nothing to keep, call send_message with a short note. ")
SLEEPTIME = (
    "You are a sleep-time memory agent. You do not talk to anyone: between conversations you reorganise the "
    "core memory blocks of the agent you serve, from its recent conversation: merge duplicates, correct what "
    "was superseded, move detail that no longer needs to be always in view to archival memory, and keep each "
    "block well under its limit. Call memory_finish_edits when done."
)


def tools_text(allowed: Sequence[str]) -> str:
    return "Tools:\n" + "\n".join(f"- {TOOLS[name].signature()}" for name in allowed)


def metadata(now: datetime, recall: int, archival: int) -> str:
    """MemGPT's memory metadata: the time, and what is stored out of view."""
    return (f"<memory_metadata>\n- The current time is: {now:%Y-%m-%d %H:%M}\n"
            f"- {recall} previous messages between you and the user are stored in recall memory "
            f"(use tools to access them)\n- {archival} total memories you created are stored in archival memory "
            "(use tools to access them)\n</memory_metadata>")


def system_message(role: str, allowed: Sequence[str], memory: str, meta: str, summary: str, evicted: int) -> Message:
    parts = [role, tools_text(allowed), CALL_FORMAT, memory, meta]
    if summary:
        parts.append(SUMMARY_NOTE.format(n=evicted) + " The following is a summary of the previous messages:\n"
                     + summary)
    return {"role": "system", "content": "\n\n".join(parts)}


def agent_role(listening: bool) -> str:
    return AGENT.format(listening=LISTENING if listening else "")


def sleeptime_request(transcript: Sequence[str]) -> str:
    return ("Recent conversation of the agent you serve:\n" + "\n".join(transcript)
            + "\n\nReorganise its memory blocks from this conversation, one tool call at a time.")
