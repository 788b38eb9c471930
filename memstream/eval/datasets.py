"""Loaders for LoCoMo and LongMemEval in their original schemas, into one shape.

A :class:`Haystack` is what one memory stream holds (a LoCoMo conversation, a
LongMemEval item) and the questions asked of it. Each memory has the ``text``
a reader would get back (and BM25 indexes), and ``chunks``: windows that
cover all of that text for the embedder, which reads only a few hundred
tokens; a memory's relevance is its best chunk.

Known defects are survived and counted, never guessed at: LoCoMo evidence ids
joined in one string, with leading zeros, malformed or missing; questions
without evidence (adversarial ones, abstention ones) are left out of scoring.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from memstream.errors import MemstreamError
from memstream.files import read_json
from memstream.models import windows

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
Granularity = Literal["turn", "session", "round"]
_DIA_ID = re.compile(r"D(\d+):(\d+)")


@dataclass
class EvalMemory:
    """A memory as evaluated: its text, and the keys it is found by.

    ``chunks`` are what the embedder reads (windows covering all of the text,
    plus any context key); ``lexical_keys`` are the documents the keyed BM25
    indexes. A memory scores as its best key.
    """

    key: str
    text: str
    chunks: list[str]
    created_at: datetime
    lexical_keys: list[str] = field(default_factory=list)


@dataclass
class Question:
    qid: str
    text: str
    asked_at: datetime
    evidence: frozenset[int]  # positions of the evidence memories in the haystack
    category: str
    answer: str = ""          # the gold answer (for LongMemEval's abstention items, why it cannot be answered)
    abstention: bool = False  # no answer in the haystack: a right answer says so


@dataclass
class Haystack:
    key: str
    memories: list[EvalMemory]
    questions: list[Question]


@dataclass
class Dataset:
    name: str
    granularity: Granularity
    haystacks: list[Haystack]
    skipped: Counter = field(default_factory=Counter)

    @property
    def n_questions(self) -> int:
        return sum(len(h.questions) for h in self.haystacks)


def _read(path: str | Path, what: str, check: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    path = Path(path)
    data = read_json(path, "file")
    if not isinstance(data, list) or not data or not all(isinstance(x, dict) and check(x) for x in data):
        raise MemstreamError(f"{path} is not {what}")
    return data


# -- LoCoMo ------------------------------------------------------------------------------------


def _locomo_time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except (ValueError, AttributeError):
        return None


def load_locomo(path: str | Path, *, context: int = 1) -> Dataset:
    """One haystack per conversation; each turn a memory (``speaker: text`` plus its image caption).

    Keys: the turn itself, and the turn with ``context`` turns either side
    under its session date, so a reply like "Yes, last Tuesday!" is found
    through what it answers. Times are the sessions' (read as UTC).
    """
    data = _read(path, "a LoCoMo file (a list of conversations with 'conversation' and 'qa')",
                 lambda x: isinstance(x.get("conversation"), dict) and isinstance(x.get("qa"), list))
    out = Dataset("locomo", "turn", [])
    for n, conv in enumerate(data):
        c = conv["conversation"]
        turns: list[tuple[str, str, str, datetime]] = []  # dia_id, text, date label, time
        sessions = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        last_time = datetime(2000, 1, 1, tzinfo=UTC)
        for s in sessions:
            when = _locomo_time(c.get(f"session_{s}_date_time", ""))
            if when is None:
                out.skipped["session dates unreadable (previous date used)"] += 1
                when = last_time
            last_time = when
            for turn in c[f"session_{s}"]:
                text = f"{turn.get('speaker', '?')}: {turn.get('text', '')}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                turns.append((str(turn.get("dia_id", "")), text, when.strftime("%d %B %Y"), when))
        memories = []
        for i, (dia_id, text, label, when) in enumerate(turns):
            around = [t[1] for t in turns[max(0, i - context) : i + context + 1] if t[2] == label]
            keyed = f"[{label}] " + " / ".join(around)
            chunks = [*windows(text), *windows(keyed)] if context else windows(text)
            memories.append(EvalMemory(dia_id, text, chunks, when, [text, keyed] if context else [text]))
        where = {m.key: i for i, m in enumerate(memories)}
        questions = []
        for j, qa in enumerate(conv["qa"]):
            category = LOCOMO_CATEGORIES.get(qa.get("category"), str(qa.get("category")))
            if category == "adversarial":
                out.skipped["adversarial questions (no evidence)"] += 1
                continue
            evidence, unresolved = set(), 0
            for raw in qa.get("evidence") or []:
                found = _DIA_ID.findall(str(raw))
                unresolved += not found
                for a, b in found:
                    key = f"D{int(a)}:{int(b)}"
                    if key in where:
                        evidence.add(where[key])
                    else:
                        unresolved += 1
            if unresolved:
                out.skipped["evidence ids unresolved"] += unresolved
            if not evidence:
                out.skipped["questions without resolvable evidence"] += 1
                continue
            questions.append(Question(f"{conv.get('sample_id', n)}/{j}", str(qa.get("question", "")),
                                      last_time, frozenset(evidence), category, str(qa.get("answer", ""))))
        out.haystacks.append(Haystack(str(conv.get("sample_id", n)), memories, questions))
    return out


# -- LongMemEval -------------------------------------------------------------------------------


def _lme_time(text: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)
    except (ValueError, AttributeError):
        raise MemstreamError(f"LongMemEval date {text!r} is not like '2023/05/30 (Tue) 22:54'") from None


def load_longmemeval(path: str | Path, *, granularity: Literal["session", "round"] = "session",
                     roles: tuple[str, ...] = ("user", "assistant"), abstention: bool = False) -> Dataset:
    """One haystack per item. ``session``: each session a memory, evidence = answer_session_ids.
    ``round``: each user turn with the assistant's reply a memory, evidence = rounds with has_answer.

    ``roles`` limits what the embedder reads (BM25 and context cost always see all text).
    ``abstention`` keeps the abstention items (no evidence; answers are judged on them).
    """
    if granularity not in ("session", "round"):
        raise MemstreamError(f"granularity {granularity!r} must be session or round")
    data = _read(path, "a LongMemEval file (a list of items with 'haystack_sessions')",
                 lambda x: isinstance(x.get("haystack_sessions"), list) and "question" in x)
    out = Dataset("longmemeval", granularity, [])
    for item in data:
        abstains = str(item.get("question_id", "")).endswith("_abs")
        if abstains and not abstention:
            out.skipped["abstention questions (no evidence)"] += 1
            continue
        memories: list[EvalMemory] = []
        evidence: set[int] = set()
        answers = set(item.get("answer_session_ids") or [])
        for sid, date, session in zip(item["haystack_session_ids"], item["haystack_dates"],
                                      item["haystack_sessions"], strict=False):
            when = _lme_time(date)
            groups = [session] if granularity == "session" else _rounds(session)
            for r, turns in enumerate(groups):
                key = sid if granularity == "session" else f"{sid}#{r}"
                text = "\n".join(f"{t['role']}: {t['content']}" for t in turns)
                chunks = [w for t in turns if t["role"] in roles for w in windows(t["content"])]
                hit = sid in answers if granularity == "session" else any(t.get("has_answer") for t in turns)
                if hit:
                    evidence.add(len(memories))
                memories.append(EvalMemory(key, text, chunks or windows(text), when, [text]))
        if abstains:
            evidence = set()
        elif not evidence:
            out.skipped["items without evidence at this granularity"] += 1
            continue
        q = Question(str(item["question_id"]), str(item["question"]), _lme_time(item["question_date"]),
                     frozenset(evidence), str(item.get("question_type", "unknown")), str(item.get("answer", "")),
                     abstains)
        out.haystacks.append(Haystack(q.qid, memories, [q]))
    return out


def _rounds(session: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A round is a user turn and the assistant turns that answer it."""
    rounds: list[list[dict[str, Any]]] = []
    for turn in session:
        if turn.get("role") == "user" or not rounds:
            rounds.append([turn])
        else:
            rounds[-1].append(turn)
    return rounds


#: memstream's own small files in each benchmark's schema (memstream/examples/), written for the project: what
#: the notebooks and a fresh clone run on when the real data is not there. Figures on them are not the benchmark's.
SAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: Per benchmark: the dev file under the data folder, the sample beside the package, where the real data comes from.
_BENCHMARKS = {
    "locomo": ("LoCoMo", "locomo/locomo-dev.json", "locomo-sample.json",
               "LoCoMo, Maharana et al. 2024, arXiv:2402.17753, the file data/locomo10.json of its repository"),
    "longmemeval": ("LongMemEval", "longmemeval/longmemeval-s-dev.json", "longmemeval-sample.json",
                    "LongMemEval, Wu et al. ICLR 2025, arXiv:2410.10813, its S setting"),
}


def data_file(benchmark: Literal["locomo", "longmemeval"], data: str | Path | None = None, *,
              say: Callable[[str], object] | None = print) -> Path:
    """The dev file of ``benchmark`` in the data folder, or memstream's own sample of it where that is missing.

    ``data`` is the folder (``MEMSTREAM_DATA`` when None; ``../shared/data`` is the repository's convention),
    holding ``locomo/locomo-dev.json`` and ``longmemeval/longmemeval-s-dev.json``. ``say`` gets one line naming
    the file used and, for the sample, where the real data comes from.

    >>> data_file("locomo", "/nowhere", say=None).name
    'locomo-sample.json'
    """
    if benchmark not in _BENCHMARKS:
        raise MemstreamError(f"benchmark {benchmark!r}: give one of {', '.join(_BENCHMARKS)}")
    title, dev, sample, source = _BENCHMARKS[benchmark]
    folder = Path(data) if data is not None else Path(os.environ["MEMSTREAM_DATA"]) if "MEMSTREAM_DATA" in os.environ \
        else None
    if folder is not None and (folder / dev).is_file():
        if say:
            say(f"{title}: {folder / dev}")
        return folder / dev
    if say:
        where = f"no {folder / dev}" if folder is not None else "no data folder given (MEMSTREAM_DATA)"
        say(f"{title}: {where}, so memstream's own small sample (memstream/examples/{sample}; its figures are not "
            f"{title}'s). The real data: {source}; put it at DATA/{dev} and set MEMSTREAM_DATA=DATA.")
    return SAMPLES / sample


def sliced(dataset: Dataset, limit: int) -> Dataset:
    """The first ``limit`` questions of ``dataset`` (in file order), with only the haystacks they ask of."""
    haystacks, left = [], limit
    for h in dataset.haystacks:
        if left <= 0:
            break
        haystacks.append(Haystack(h.key, h.memories, h.questions[:left]))
        left -= len(haystacks[-1].questions)
    return Dataset(dataset.name, dataset.granularity, haystacks, dataset.skipped)
