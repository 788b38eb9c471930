"""How a stage's prompt is laid out: what never changes first, so a server's prefix cache can serve it.

A serving engine reuses the computed prefix a request shares with an earlier one (vLLM's automatic
prefix caching keeps every recent prompt's blocks; llama.cpp's server keeps its slot's last prompt).
So every stage puts its fixed instructions and worked example in the system message (the same for
every agent), then, in the user message, the agent's identity (the same for every request of that
agent), then what changes (memories retrieved, the time, the observation) and the question itself.
``benchmarks/prefix_share.py`` measures what this buys; ``metrics.json`` reports what a server served.
"""

from __future__ import annotations

from memstream.models.base import Call, Message


def laid_out(instructions: str, *parts: str) -> list[Message]:
    """``instructions`` as the system message, then one user message of ``parts`` (stablest first),
    blank parts left out."""
    return [{"role": "system", "content": instructions},
            {"role": "user", "content": "\n\n".join(p for p in parts if p)}]


def issue_order(calls: list[Call]) -> list[int]:
    """The order to send a batch in, as indices: sorted by the prompts' text, so one stage's requests go
    together and, within a stage, one agent's. A server that keeps only its last prompt (llama.cpp's
    slot) then reuses most of each prompt for the next; answers are still returned in the batch's order."""
    return sorted(range(len(calls)), key=lambda i: [m["content"] for m in calls[i][1]])
