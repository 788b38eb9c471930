"""Which structured-output form an endpoint gets, chosen by asking it once.

Servers differ: OpenAI and vLLM take ``response_format`` ``json_schema`` and constrain decoding
almost for free; llama.cpp's servers refuse ``json_schema``, take a schema inside ``json_object``,
and decode under its grammar at about half their plain speed (measured: 4.7 against 10 tokens/s on a
2-core machine); some take neither. Sending the most constraining form and stepping down on a
refusal (what the back-end does anyway) finds what a server *accepts*, not what it *costs*; so at
the first request that carries a schema, the back-end asks one small question in each form and
keeps the most constraining form that was accepted, answered in valid JSON, and cost at most
:data:`SLOWDOWN_LIMIT` times plain prompting (the parsers read a plain answer as well, with a
retry that names the problem). ``MEMSTREAM_STRUCTURED`` forces a form and skips the probe.

The probe's answers are not a stage's: they are not counted in the run's usage, and its
outcome is reported in ``metrics.json`` (``structured_probe``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TypedDict

from memstream.files import JsonObject

#: The forms, most constraining first (``plain`` sends no schema).
STRUCTURED_MODES = ("json_schema", "json_object", "plain")
#: ``auto``: probe the endpoint at its first schema request; any other value forces that form.
STRUCTURED_SETTINGS = ("auto", *STRUCTURED_MODES)
#: A constrained form is kept while it costs at most this many times plain prompting.
SLOWDOWN_LIMIT = 1.5
#: Differences below this many seconds are noise, whatever the ratio (a fast server's tiny answers).
NOISE_S = 0.25

PROBE_PURPOSE = "probe.structured"
PROBE_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"colours": {"type": "array", "items": {"type": "string", "maxLength": 16}, "maxItems": 3}},
    "required": ["colours"],
}
PROBE_MESSAGES = [
    {"role": "system", "content": "Answer with one JSON object and nothing else."},
    {"role": "user", "content": 'Name three colours of the rainbow as {"colours": ["...", "...", "..."]}.'},
]
PROBE_MAX_TOKENS = 48
#: Each form is asked this many times, interleaved, and its fastest answer counts: a shared server's
#: queue or a busy machine slows single requests at random, and the minimum is the form's own cost.
PROBE_ROUNDS = 2


@dataclass
class FormTrial:
    """How one form fared: accepted by the server, answered in valid JSON, and in how many seconds."""

    accepted: bool
    valid_json: bool = False
    seconds: float | None = None
    error: str = ""


class ProbeReport(TypedDict):
    """A probe as ``metrics.json`` reports it (a dict: it is dumped as is)."""

    chosen: str
    forced: bool
    why: str
    trials: dict[str, dict[str, object]]


@dataclass
class ProbeResult:
    chosen: str
    forced: bool = False
    trials: dict[str, FormTrial] = field(default_factory=dict)
    why: str = ""

    def as_dict(self) -> ProbeReport:
        return {"chosen": self.chosen, "forced": self.forced, "why": self.why,
                "trials": {mode: asdict(t) for mode, t in self.trials.items()}}


def valid_answer(text: str) -> bool:
    """Whether the probe's answer is the JSON it asked for (an object with a list of strings)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return False
    return isinstance(value, dict) and isinstance(value.get("colours"), list) and all(
        isinstance(c, str) for c in value["colours"])


def choose(trials: dict[str, FormTrial]) -> tuple[str, str]:
    """The form to use, and why: the most constraining form accepted, answered in valid JSON and at
    most :data:`SLOWDOWN_LIMIT` times as slow as plain prompting (within :data:`NOISE_S`)."""
    plain = trials.get("plain")
    base = plain.seconds if plain is not None and plain.accepted and plain.seconds is not None else None
    for mode in STRUCTURED_MODES[:-1]:
        trial = trials.get(mode)
        if trial is None or not trial.accepted:
            continue
        if not trial.valid_json:
            continue
        if base is None or trial.seconds is None or trial.seconds <= base * SLOWDOWN_LIMIT + NOISE_S:
            timed = base is not None and trial.seconds is not None
            cost = f" ({trial.seconds:.2f} s against {base:.2f} s plain)" if timed else ""
            return mode, f"the most constraining form the server accepted and answered in valid JSON{cost}"
        return "plain", (f"{mode} was accepted but cost {trial.seconds:.2f} s against {base:.2f} s plain "
                         f"(over {SLOWDOWN_LIMIT}x)")
    return "plain", "no constraining form was accepted and answered in valid JSON"


def probe(ask: Callable[[str], tuple[str, float]], refused: Callable[[Exception], bool]) -> ProbeResult:
    """Ask the probe question in each form (``ask(mode) -> (answer, seconds)``) and choose.

    Plain is asked first, untimed, so every timed trial meets the same warm prefix cache; then each
    form :data:`PROBE_ROUNDS` times, interleaved, keeping its fastest answer (valid JSON only if
    every answer was). A form the server refuses (``refused(error)``) is marked so and not asked
    again; any other error stops the probe, and the back-end keeps its step-down behaviour (most
    constraining first) as if no probe had run.
    """
    trials: dict[str, FormTrial] = {}
    try:
        ask("plain")  # warms the server's prompt cache: the timed trials below all meet it warm
        for _ in range(PROBE_ROUNDS):
            for mode in STRUCTURED_MODES:
                if mode in trials and not trials[mode].accepted:
                    continue
                try:
                    text, seconds = ask(mode)
                except Exception as error:  # a refusal is a finding; anything else ends the probe
                    if not refused(error) or mode == "plain":
                        raise
                    trials[mode] = FormTrial(accepted=False, error=str(error)[:120])
                    continue
                earlier = trials.get(mode)
                trials[mode] = FormTrial(
                    accepted=True, valid_json=valid_answer(text) and (earlier is None or earlier.valid_json),
                    seconds=round(min(seconds, earlier.seconds if earlier and earlier.seconds is not None
                                      else seconds), 3))
    except Exception as error:  # the endpoint failing is the run's to handle, not the probe's
        return ProbeResult(chosen=STRUCTURED_MODES[0], trials=trials,
                           why=f"the probe could not finish ({type(error).__name__}: {str(error)[:80]}); "
                               "stepping down from json_schema on a refusal")
    chosen, why = choose(trials)
    return ProbeResult(chosen=chosen, trials=trials, why=why)
