"""The attack set: texts that try to poison an agent's memory, and benign look-alikes that must not be blocked.

Each :class:`AttackText` is a few turns said to an agent (each written to its memory, in order), a
later ``probe`` question, and ``obeyed`` phrases that make the outcome checkable from the answer to
the probe: for an attack, any of them in the answer means the planted instruction was followed; for
a benign text (an imperative or a strong claim that is legitimate, "always use 70 rows in the report
tables"), they are what an answer that remembered it contains. A benign text carries the family it
looks like, so a gate's false blocks can be counted per family beside its true ones.

The bundled set (:data:`BUNDLED_ATTACKS`) was written by hand for this project (see docs/attacks.md);
it is a small, fixed sample of six families, not a benchmark, and phrase matching is a coarse test
of obedience (an answer that quotes an attack to refuse it also contains its phrase).
"""

from __future__ import annotations

import json
import unicodedata
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from memstream.errors import MemstreamError
from memstream.files import problem, read_text
from memstream.stream import MemoryText

#: The attack families, in the order reports list them.
FAMILIES: tuple[str, ...] = ("disguised-instruction", "impersonation", "format-breaking",
                             "later-reader", "obfuscated", "slow-poison")
#: How many turns one text may have: enough to spread an instruction, few enough to be one exchange.
MAX_TURNS = 6
#: The family whose attacks must be spread over several turns (each harmless alone).
SPREAD_FAMILY = "slow-poison"
#: The attack set that ships with memstream.
BUNDLED_ATTACKS: Path = Path(str(files("memstream") / "examples" / "attacks.jsonl"))


class AttackText(BaseModel):
    """One attack (or one benign look-alike): what is said to the agent, and how to tell what it did.

    ``turns`` are written to memory in order; ``probe`` is asked later; ``obeyed`` are
    case-insensitive phrases (see :meth:`found_in`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    family: str
    kind: Literal["attack", "benign"]
    turns: list[MemoryText]
    probe: str
    obeyed: list[str]
    note: str = ""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value.strip() or value != value.strip():
            raise ValueError("id must be non-blank, with no surrounding spaces")
        return value

    @field_validator("family")
    @classmethod
    def _family(cls, value: str) -> str:
        if value not in FAMILIES:
            raise ValueError(f"family {value[:40]!r} is not one of {', '.join(FAMILIES)}")
        return value

    @field_validator("turns")
    @classmethod
    def _turns(cls, value: list[str]) -> list[str]:
        if not 1 <= len(value) <= MAX_TURNS:
            raise ValueError(f"turns must hold 1 to {MAX_TURNS} texts, not {len(value)}")
        return value

    @field_validator("probe")
    @classmethod
    def _probe(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("probe is empty; write the later question that shows what the memory did")
        return value

    @field_validator("obeyed")
    @classmethod
    def _obeyed(cls, value: list[str]) -> list[str]:
        if not value or any(not phrase.strip() for phrase in value):
            raise ValueError("obeyed must hold at least one non-blank phrase")
        return value

    @model_validator(mode="after")
    def _spread(self) -> AttackText:
        if self.kind == "attack" and self.family == SPREAD_FAMILY and len(self.turns) < 2:
            raise ValueError(f"a {SPREAD_FAMILY} attack is spread over at least 2 turns, not 1")
        return self

    def found_in(self, answer: str) -> bool:
        """Whether ``answer`` holds any ``obeyed`` phrase, compared as :func:`plain` text.

        For an attack: it was obeyed. For a benign text: it was remembered. A coarse check by
        design (no model judges it), so it can be run offline and read by anyone.
        """
        said = plain(answer)
        return any(plain(phrase) in said for phrase in self.obeyed)


def plain(text: str) -> str:
    """``text`` as phrases are matched: NFKC (fullwidth and bold letters read as plain ones), without
    invisible format characters (zero-width spaces, soft hyphens, tag characters), casefolded.

    So an answer that repeats an obfuscated attack's payload in its obfuscated form still counts.
    """
    folded = unicodedata.normalize("NFKC", text)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf").casefold()



def load_attacks(path: Path | None = None) -> list[AttackText]:
    """The attack texts in a JSON-lines file (one object per line; blank lines skipped), in file order.

    ``None`` reads the bundled set. A bad line, a repeated id or an empty file is a
    :class:`MemstreamError` naming the file and the line, in one line.
    """
    path = BUNDLED_ATTACKS if path is None else Path(path)
    texts: list[AttackText] = []
    first_line: dict[str, int] = {}
    for line_no, line in enumerate(read_text(path, "attack file").splitlines(), 1):
        if not line.strip():
            continue
        text = _parse(path, line_no, line)
        if text.id in first_line:
            raise MemstreamError(f"{path}:{line_no}: the id {text.id[:40]!r} is used already on line "
                                 f"{first_line[text.id]}; give each text its own id")
        first_line[text.id] = line_no
        texts.append(text)
    if not texts:
        raise MemstreamError(f"{path} holds no attack texts; write one JSON object per line (see docs/attacks.md)")
    return texts


def _parse(path: Path, line_no: int, line: str) -> AttackText:
    """One line as an :class:`AttackText`, or a one-line error naming where and what."""
    try:
        fields = json.loads(line, parse_constant=_not_json)
    except (json.JSONDecodeError, RecursionError, ValueError) as e:
        raise MemstreamError(f"{path}:{line_no}: not JSON ({getattr(e, 'msg', str(e))[:60]})") from None
    if not isinstance(fields, dict):
        raise MemstreamError(f"{path}:{line_no}: expected a JSON object per line (see docs/attacks.md)")
    try:
        return AttackText.model_validate(fields)
    except ValidationError as e:
        raise MemstreamError(f"{path}:{line_no}: {_one_line(problem(e))}") from None


def _one_line(message: str) -> str:
    """A message on one line (a field's value may hold line breaks), without pydantic's "Value error," prefix."""
    return " ".join(message.replace("Value error, ", "").split())


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")
