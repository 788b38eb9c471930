"""The write gate with a real model, on a small sample of the attack set: per family, attacks and
benign look-alikes blocked, beside the offline rules on the same texts. By hand, not in make test.

    python benchmarks/trust_gate_real.py --llm openai:MODEL [--per-family 1] [--attacks FILE]
        [--record tests/fixtures/gate] [--json]

The sample is the first ``--per-family`` attacks and benign texts of each family (in file order:
nothing is picked by how the gate does) of the attack set (``--attacks``, default the bundled one;
read as its documented JSONL lines, so the recording keeps the texts it was made from). Every turn of a text is asked of the gate as a design's
entry is (source "turn from user", the same messages), so the recorded answers also replay in
``memstream eval attacks``. A text counts as blocked if any of its turns is. With ``--record DIR``
the model's call cache goes to ``DIR/calls.db`` and the figures to ``DIR/report.json``;
``tests/trust/test_trust_real.py`` replays them (a call not recorded fails the test).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from memstream.eval import BUNDLED_ATTACKS, FAMILIES
from memstream.models import CachedChatModel, ChatModel, OfflineChatModel, make_chat_model, run_direct
from memstream.trust import GATE_PURPOSE, Verdict, gate_stage, judge_name

#: The source a design's gate is told for a user's turn (``MemoryDesign.remember_stage``).
SOURCE = "turn from user"
Text = dict[str, Any]


def sample(path: Path, per_family: int) -> list[Text]:
    """The first ``per_family`` attacks and benign texts of each family, in file order."""
    taken: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        a = json.loads(line)
        if taken[(a["family"], a["kind"])] < per_family:
            taken[(a["family"], a["kind"])] += 1
            out.append({k: a[k] for k in ("id", "family", "kind", "turns")})
    return out


def judged(texts: list[Text], chat: ChatModel, seconds: float = float("inf")) -> list[list[Verdict]]:
    """The gate's verdict on every turn of the texts, a text at a time (the call cache commits each
    text's answers), until ``seconds`` have passed: the texts judged by then (in order)."""
    started, out = time.perf_counter(), []
    for a in texts:
        if time.perf_counter() - started > seconds:
            break
        out.append(run_direct(gate_stage(a["turns"], sources=[SOURCE] * len(a["turns"]), by=judge_name(chat)), chat))
    return out


def report(texts: list[Text], verdicts: list[list[Verdict]]) -> dict[str, Any]:
    """Per family and kind: texts, blocked (any turn), failed (a turn's check could not run)."""
    per: dict[str, dict[str, dict[str, int]]] = {f: {k: {"n": 0, "blocked": 0, "failed": 0}
                                                     for k in ("attack", "benign")} for f in FAMILIES}
    for a, vs in zip(texts, verdicts, strict=True):
        row = per[a["family"]][a["kind"]]
        row["n"] += 1
        row["blocked"] += any(not v.allowed for v in vs)
        row["failed"] += any(v.failed for v in vs)
    attacks = sum(r["attack"]["n"] for r in per.values())
    benign = sum(r["benign"]["n"] for r in per.values())
    return {"attacks": attacks, "benign": benign,
            "attacks_blocked": round(sum(r["attack"]["blocked"] for r in per.values()) / max(attacks, 1), 4),
            "benign_blocked": round(sum(r["benign"]["blocked"] for r in per.values()) / max(benign, 1), 4),
            "per_family": per,
            "texts": [{**a, "verdicts": [{"allowed": v.allowed, "reason": v.reason, "failed": v.failed} for v in vs]}
                      for a, vs in zip(texts, verdicts, strict=True)]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--llm", required=True)
    p.add_argument("--per-family", type=int, default=1)
    p.add_argument("--attacks", type=Path, default=BUNDLED_ATTACKS)
    p.add_argument("--seconds", type=float, default=780, help="ask no new text after this long (default 780: the "
                   "shared local model's budget)")
    p.add_argument("--record", metavar="DIR")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    texts = sample(args.attacks, args.per_family)
    model = make_chat_model(args.llm, timeout=600)
    out = Path(args.record) if args.record else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    chat = CachedChatModel(model, (out / "calls.db") if out else ":memory:")
    started = time.perf_counter()
    verdicts = judged(texts, chat, args.seconds)
    texts = texts[:len(verdicts)]
    result = {"model": model.name, "per_family": args.per_family, "sampled": len(texts),
              "model_gate": report(texts, verdicts),
              "offline_rules": report(texts, judged(texts, OfflineChatModel())),
              "seconds": round(time.perf_counter() - started, 1),
              "usage": chat.usage.as_dict().get(GATE_PURPOSE, {})}
    if out:
        (out / "report.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for who in ("model_gate", "offline_rules"):
        r = result[who]
        print(f"{who}: attacks blocked {r['attacks_blocked']:.2f} of {r['attacks']}, benign blocked "
              f"{r['benign_blocked']:.2f} of {r['benign']}")
        for family, row in r["per_family"].items():
            a, b = row["attack"], row["benign"]
            print(f"  {family:<22} attacks {a['blocked']}/{a['n']}  benign {b['blocked']}/{b['n']}  "
                  f"failed {a['failed'] + b['failed']}")
    print(f"{result['seconds']} s")


if __name__ == "__main__":
    main()
