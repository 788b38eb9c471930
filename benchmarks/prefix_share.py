"""How much of each prompt a server's prefix cache could serve, from the prompts alone (no server).

A serving engine reuses the computed prefix of an earlier prompt: llama.cpp's server keeps its one
slot's last prompt (a request shares only what it has in common with the request before it);
vLLM's automatic prefix caching keeps every recent prompt's blocks (a request shares the longest
prefix it has in common with any earlier one). Which share a run gets is set by how its prompts are
laid out: fixed instructions first, then the agent's stable identity, then what changes.

This records every request of the shrunk party set-up (4 agents, 12 simulated hours, Isabella
whispered the party) answered by the offline rules, in the order a server would see them, and
reports per purpose the share of prompt tokens each cache could serve. Tokens are counted with
memstream's rough tokenizer (words and punctuation), so the figures are estimates of the share, not
of a particular model's token counts.

    python benchmarks/prefix_share.py [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from memstream.models import OfflineChatModel, count_tokens
from memstream.models.base import Call, ChatModel, Completion
from memstream.models.layout import issue_order


class Requests(ChatModel):
    """Answers with the offline rules and keeps each request's purpose and prompt text, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = OfflineChatModel()
        self.name = self.inner.name
        self.sent: list[tuple[str, str]] = []

    def _generate(self, messages, purpose, params) -> Completion:
        return self._generate_many([(purpose, messages)], params)[0]

    def _generate_many(self, calls: list[Call], params: dict[str, Any]) -> list[Completion]:
        self.sent += [(calls[i][0], prompt_text(calls[i][1])) for i in issue_order(calls)]  # as the back-end sends
        return self.inner._generate_many(calls, params)


def prompt_text(messages: list[dict]) -> str:
    """The prompt as a server reads it, message after message (roles included: they are tokens too)."""
    return "".join(f"<|{m['role']}|>{m['content']}" for m in messages)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def shares(sent: list[tuple[str, str]]) -> dict[str, Any]:
    """Per purpose and overall: the share of prompt tokens served by one slot (the previous request's
    prefix) and by a cache of every earlier prompt (the longest prefix shared with any)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    earlier: list[str] = []
    previous = ""
    for purpose, text in sent:
        one_slot = count_tokens(text[:common_prefix(previous, text)])
        any_earlier = max((count_tokens(text[:common_prefix(e, text)]) for e in earlier[-200:]), default=0)
        row = totals[purpose]
        row[0] += count_tokens(text)
        row[1] += one_slot
        row[2] += any_earlier
        earlier.append(text)
        previous = text
    every = [sum(r[i] for r in totals.values()) for i in range(3)]

    def share(r: list[int]) -> dict[str, Any]:
        return {"prompt_tokens": r[0], "one_slot": round(r[1] / max(r[0], 1), 3),
                "all_prompts": round(r[2] / max(r[0], 1), 3)}

    return {"requests": len(sent), "all": share(every),
            "by_purpose": {p: share(r) for p, r in sorted(totals.items())}}


def main() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from party_run import run_party

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    model = Requests()
    with tempfile.TemporaryDirectory() as tmp:
        run_party(Path(tmp) / "run", "offline", timeout=60, chat=model)
    result = shares(model.sent)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['requests']} requests; share of prompt tokens a prefix cache could serve "
          f"(one slot / every earlier prompt): {result['all']['one_slot']:.0%} / {result['all']['all_prompts']:.0%}")
    for purpose, r in result["by_purpose"].items():
        print(f"  {purpose:<24}{r['prompt_tokens']:>9} tokens  {r['one_slot']:>5.0%}  {r['all_prompts']:>5.0%}")


if __name__ == "__main__":
    main()
