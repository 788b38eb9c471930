"""Reading what a model wrote: JSON found in damaged answers, answers validated into schemas,
citations, yes/no, and the registry of each purpose's answer schema.

Every stage's parser is built from these; none trusts the answer's shape. A back-end that can
constrain its output is sent the registered schema, but the parsers never rely on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ValidationError

from memstream.errors import StructuredOutputError
from memstream.files import JsonObject

Schema = TypeVar("Schema", bound=BaseModel)

ANSWER_SCHEMAS: dict[str, JsonObject] = {}
"""Purpose -> the JSON schema of its answer, registered by the package that owns the prompt. A back-end
that can constrain its output (OpenAI, vLLM, llama.cpp's server) is sent it; the parsers never rely on it."""


def register_answer_schema(purpose: str, model: type[BaseModel]) -> None:
    """Register the JSON schema of a purpose's answer, for back-ends that constrain their output to it."""
    ANSWER_SCHEMAS[purpose] = model.model_json_schema()


ANSWER_TOOLS: dict[str, list[JsonObject]] = {}
"""Purpose -> the tools its answer calls (OpenAI function specs), registered by the package that owns the
prompt. A back-end with a tools API is sent them, and the tool call it returns becomes the answer's text
(:func:`tool_call_text`), so the purpose's parser reads a called tool and a written one alike."""


def register_answer_tools(purpose: str, tools: list[JsonObject]) -> None:
    """Register the tools a purpose's answer may call, for back-ends with a tools API."""
    ANSWER_TOOLS[purpose] = tools


def tool_call_text(name: Any, arguments: Any) -> str:
    """A tools API's call as answer text, ``{"tool": NAME, "arguments": {...}}``: the arguments as an object
    where their JSON reads as one, else as the text the server sent (which a strict parser refuses)."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            value = arguments
    return json.dumps({"tool": name if isinstance(name, str) else None, "arguments": value}, ensure_ascii=False)


def _numbers(value: Any) -> list[int]:
    """Citation numbers from what a model wrote: ``[3, 5]``, ``["3", "5"]``, ``"3, 5"`` or ``3``."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [int(n) for item in items if isinstance(item, (int, str)) and not isinstance(item, bool)
            for n in re.findall(r"-?\d{1,12}", str(item))]


Citations = Annotated[list[int], BeforeValidator(_numbers)]
"""The numbers of the listed statements an answer rests on; the caller maps them to memory ids and drops any it
did not list (a model's number is never trusted as an id)."""


def parse_structured(text: str, schema: type[Schema]) -> Schema:
    """Parse a model's answer into ``schema``, tolerating code fences and chatter around the JSON."""
    candidate = _json_span(text)
    try:
        return schema.model_validate_json(candidate)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        raise StructuredOutputError(
            f"model answer does not parse as {schema.__name__}: {where}: {first['msg']} "
            f"(answer began {text[:80]!r})"
        ) from None


def maybe_structured(text: str, schema: type[Schema]) -> Schema | None:
    """``schema`` parsed from the answer's JSON, or None when it has none that fits (so a
    caller can fall back to reading the plain-text form weak models write)."""
    if "{" not in text:
        return None
    try:
        return parse_structured(text, schema)
    except StructuredOutputError:
        return None


#: Longest answer the recovering reader scans (a model that rambles past this is cut off there).
SCAN_CHARS = 20_000


def json_values(text: str) -> list[Any]:
    """Every JSON object or array readable in ``text``, in order, even where the text around them is
    damaged: a stray bracket, a code fence, a preamble, an answer cut off mid-way. Where a value
    does not parse as a whole, the values inside it still can."""
    decoder = json.JSONDecoder()
    text = text[:SCAN_CHARS]
    out: list[Any] = []
    i = 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return out
        start = min(starts)
        try:
            value, i = decoder.raw_decode(text, start)
            out.append(value)
        except (ValueError, RecursionError):
            i = start + 1


def items_of(text: str, model: type[Schema]) -> list[Schema]:
    """Every object in the answer, at any depth, that validates as ``model``, in order."""
    found: list[Schema] = []

    def walk(value: Any) -> None:
        values: Iterable[Any]
        if isinstance(value, dict):
            try:
                found.append(model.model_validate(value))
                return
            except ValidationError:
                pass
            values = value.values()
        elif isinstance(value, list):
            values = value
        else:
            return
        for v in values:
            walk(v)

    for value in json_values(text):
        walk(value)
    return found


_OUT_OF_CHARACTER = re.compile(r"\b(as an ai|an ai language model|as a language model|i am an ai|i'm an ai|"
                               r"i don't have the ability to remember|i do not have personal)\b", re.IGNORECASE)


def out_of_character(text: str) -> bool:
    """Whether an answer that should come from an agent comes from the model speaking as itself."""
    return bool(_OUT_OF_CHARACTER.search(text))


def parse_yes_no(text: str) -> bool:
    """A plain "yes ..." or "no ..." answer; :class:`StructuredOutputError` if it is neither."""
    head = text.strip().lower()
    if head.startswith(("yes", "no")):
        return head.startswith("yes")
    raise StructuredOutputError(f"no yes/no decision in the answer (began {text[:60]!r})")


def _json_span(text: str) -> str:
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, flags=re.S)
    if fenced:
        text = fenced.group(1)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return text.strip()
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]
