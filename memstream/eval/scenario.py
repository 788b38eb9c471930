"""A scenario: scripted sessions of a user working with an agent, with what memory should hold and
questions that test it (the format is documented in ``docs/scenarios.md``).

Sessions are separate conversations: the agent's conversation history is reset between them, so
only memory carries over. Each turn is what the user said, the tools the agent called (with their
results) and the agent's reply; it may say what memory should record from then on (**facts**,
written as criteria) and which earlier facts stop being true (``expire``: a convention changed, a
plan passed). Questions are asked when a session opens (only memory can answer them) or after a
turn (memory and that session's history). Each is marked ``memory-dependent`` (answerable only if
memory worked) or ``memory-corruptible`` (a sloppy memory makes the answer worse: another
project's context leaking in, a default the user has just overridden), with a written criterion.

An **interleaved** file names other scenario files and mixes their sessions in time order under
one owner, so several projects compete for the same memory; its own questions are asked when a
named session opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memstream.errors import MemstreamError
from memstream.eval.criteria import Phrase
from memstream.files import problem, read_data
from memstream.stream import MemoryText, normalise_owner

SCENARIO_FORMAT = "memstream-scenario/1"
INTERLEAVE_FORMAT = "memstream-interleave/1"
#: The kinds of question: answerable only if memory worked; made worse by a sloppy memory.
DEPENDENT, CORRUPTIBLE = "memory-dependent", "memory-corruptible"
#: Time between turns of a session whose turns give no time of their own.
TURN_GAP = timedelta(minutes=2)
#: The folder of the bundled scenarios (package data).
BUNDLED = Path(__file__).resolve().parent / "scenarios"
#: An id: letters, digits and ._- (a namespaced id in an interleaved run adds "name/").
ID = r"^[A-Za-z0-9][A-Za-z0-9._/-]*$"
#: Whose memory a scenario is written into (checked as the designs will store it).
Owner = Annotated[str, AfterValidator(normalise_owner)]
#: A time a field requires, or one it may leave out: :func:`_aware` gives back what it was given.
MaybeTime = TypeVar("MaybeTime", bound=datetime | None)
#: What a scenario file holds: a scenario or an interleaving of them.
Parsed = TypeVar("Parsed", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCall(_Strict):
    """A tool the agent called during a turn, and what came back."""

    name: str = Field(min_length=1, max_length=60)
    args: dict[str, Any] = Field(default_factory=dict)
    result: MemoryText


class Fact(_Strict):
    """What memory should hold from the turn that states it until a later turn expires it.

    Checked model-free against the context the design assembles for ``probe`` (the query an agent
    would recall it with): every ``require`` phrase in it, no ``forbid`` phrase."""

    id: str = Field(pattern=ID)
    probe: MemoryText
    require: list[Phrase] = Field(min_length=1)
    forbid: list[Phrase] = Field(default_factory=list)


class Question(_Strict):
    """A question to the agent, with its kind and the criterion a right answer meets (in words for a
    model judge; as phrases for the offline one: every ``require`` phrase, no ``forbid`` phrase)."""

    id: str = Field(pattern=ID)
    ask: MemoryText
    kind: Literal["memory-dependent", "memory-corruptible"]
    criterion: MemoryText
    require: list[Phrase] = Field(min_length=1)
    forbid: list[Phrase] = Field(default_factory=list)


class Turn(_Strict):
    id: str = Field(pattern=ID)
    user: MemoryText
    tools: list[ToolCall] = Field(default_factory=list)
    assistant: MemoryText | None = None
    at: datetime | None = None
    remember: list[Fact] = Field(default_factory=list)
    expire: list[str] = Field(default_factory=list)
    ask: list[Question] = Field(default_factory=list)

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return _aware(value)


class Session(_Strict):
    id: str = Field(pattern=ID)
    at: datetime
    questions: list[Question] = Field(default_factory=list, description="asked when the session opens")
    turns: list[Turn] = Field(min_length=1)

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        _aware(value)
        return value

    def times(self) -> list[datetime]:
        """Each turn's time: its own, else the previous turn's (or the session's) plus ``TURN_GAP``."""
        out, last = [], self.at - TURN_GAP
        for turn in self.turns:
            last = turn.at or last + TURN_GAP
            out.append(last)
        return out


class Scenario(_Strict):
    """A scenario eval's file (docs/scenarios.md): sessions of turns, the facts memory should hold, the questions."""

    format: Literal["memstream-scenario/1"]
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
    kind: str = ""
    description: str = ""
    owner: Owner = "user"
    sessions: list[Session] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        ids: set[str] = set()
        facts: set[str] = set()
        previous: datetime | None = None
        for session in self.sessions:
            _unique(ids, "session", session.id)
            for q in session.questions:
                _unique(ids, "question", q.id)
            times = session.times()
            if times[0] < session.at:
                raise ValueError(f"session {session.id}: its first turn is before the session opens")
            if previous is not None and times[0] < previous:
                raise ValueError(f"session {session.id} starts before the previous session ends; keep sessions "
                                 "in time order")
            if any(b < a for a, b in zip(times, times[1:], strict=False)):
                raise ValueError(f"session {session.id}: turn times go backwards")
            previous = times[-1]
            for turn in session.turns:
                _unique(ids, "turn", turn.id)
                for gone in turn.expire:
                    if gone not in facts:
                        raise ValueError(f"turn {turn.id} expires {gone!r}, which no earlier turn remembers")
                for fact in turn.remember:
                    _unique(ids, "fact", fact.id)
                    facts.add(fact.id)
                for q in turn.ask:
                    _unique(ids, "question", q.id)
        return self

    def turns(self) -> Iterator[tuple[Session, Turn, datetime]]:
        for session in self.sessions:
            yield from ((session, t, at) for t, at in zip(session.turns, session.times(), strict=True))

    def questions(self) -> list[Question]:
        return [*(q for s in self.sessions for q in s.questions), *(q for _, t, _ in self.turns() for q in t.ask)]


class Interleave(_Strict):
    """Other scenarios' sessions mixed in time order under one owner; ids become ``NAME/ID``."""

    format: Literal["memstream-interleave/1"]
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
    description: str = ""
    owner: Owner = "user"
    scenarios: list[str] = Field(min_length=2, description="scenario files, relative to this one")
    #: Questions asked when the named session (``NAME/SESSION``) opens.
    questions: dict[str, list[Question]] = Field(default_factory=dict)


def _aware(value: MaybeTime) -> MaybeTime:
    if value is not None and (value.tzinfo is None or value.utcoffset() is None):
        raise ValueError("a time has no time zone; add one, e.g. +00:00")
    return value


def _unique(seen: set[str], what: str, value: str) -> None:
    if value in seen:
        raise ValueError(f"the id {value!r} ({what}) is used twice; ids must be unique in a scenario")
    seen.add(value)


def load_scenario(path: str | Path, *, part: bool = False) -> Scenario:
    """A scenario (or an interleaved run, merged) from a YAML or JSON file; one line naming the problem.
    An interleaved file's parts (``part``) must be scenarios: an interleaving of interleavings could
    name itself."""
    path = Path(path)
    data = read_data(path, "scenario file")
    kind = data.get("format") if isinstance(data, dict) else None
    if kind == INTERLEAVE_FORMAT:
        if part:
            raise MemstreamError(f"{path} is an interleaved file; an interleaved file mixes scenario files only")
        mix = _validated(path, Interleave, data)
        return _interleaved(path, mix, [load_scenario(path.parent / name, part=True) for name in mix.scenarios])
    if kind != SCENARIO_FORMAT:
        raise MemstreamError(f"{path}: not a scenario file (format {kind!r}); it must say format: "
                             f"{SCENARIO_FORMAT} (or {INTERLEAVE_FORMAT}), see docs/scenarios.md")
    return _validated(path, Scenario, data)


def bundled_scenarios() -> list[Path]:
    """The scenarios memstream ships (the interleaved run last)."""
    return sorted(BUNDLED.glob("*.yaml"), key=lambda p: (p.stem == "interleaved", p.stem))


def _validated(path: Path, model: type[Parsed], data: Any) -> Parsed:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        message = problem(e).splitlines()[0]
        raise MemstreamError(f"{path}: bad scenario: {message} (see docs/scenarios.md)") from None


def _interleaved(path: Path, mix: Interleave, parts: list[Scenario]) -> Scenario:
    """One scenario holding every part's sessions, ids prefixed by the part's name, in time order."""
    names = [p.name for p in parts]
    if len(set(names)) < len(names):
        raise MemstreamError(f"{path}: two scenarios are named alike ({', '.join(names)}); each must have its own name")
    sessions = []
    for part in parts:
        for s in part.sessions:
            data = _prefixed(s.model_dump(), part.name)
            data["questions"] += [q.model_dump() for q in mix.questions.get(data["id"], [])]
            sessions.append(data)
    known = {s["id"] for s in sessions}
    unknown = sorted(set(mix.questions) - known)
    if unknown:
        raise MemstreamError(f"{path}: questions for {unknown[0]!r}, which is no session of "
                             f"{', '.join(names)}; name a session as NAME/SESSION")
    sessions.sort(key=lambda s: s["at"])  # stable: parts listed first go first at equal times
    data = {"format": SCENARIO_FORMAT, "name": mix.name, "kind": "interleaved", "description": mix.description,
            "owner": mix.owner, "sessions": sessions}
    return _validated(path, Scenario, data)


def _prefixed(session: dict[str, Any], name: str) -> dict[str, Any]:
    def p(x: str) -> str:
        return f"{name}/{x}"

    session["id"] = p(session["id"])
    for q in session["questions"]:
        q["id"] = p(q["id"])
    for turn in session["turns"]:
        turn["id"] = p(turn["id"])
        turn["expire"] = [p(x) for x in turn["expire"]]
        for item in (*turn["remember"], *turn["ask"]):
            item["id"] = p(item["id"])
    return session
