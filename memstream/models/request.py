"""Requests: the one way any stage asks a model, and the two ways of answering them.

A stage that needs the model (rate importance, plan a day, decompose, react,
reflect, speak, answer an interview) is written once, as a generator: it yields a
:class:`Request`, or a list of them, and receives the parsed answer (a list for a
list), or None where no usable answer was had. The same stage is then driven by

- :func:`run_direct`, which answers each yield at once (library calls, the CLI,
  notebooks); or
- a batched runner, such as the simulation's world process, which gathers what
  every agent has asked in a step and answers it all with one :func:`answer_all`.

Both answer through :func:`answer_all`: the first answers in one batch (one wait on
the model, whatever the purposes), the unreadable ones asked again in one retry
batch that shows the model its parse error, and then, per request, a fallback (the
offline rules when a fallback model is given, else None). Every retry and every
lost answer is counted in the model's ``usage``, per purpose.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memstream.errors import (
    CallsFailedError,
    EndpointFailingError,
    ImplausibleAnswerError,
    MemstreamError,
    ReplayMissError,
)
from memstream.models.base import Call, ChatModel, Message

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

#: What a parser may raise on an answer it cannot use (pydantic's ValidationError is a ValueError).
UNREADABLE = (MemstreamError, ValueError)
RETRY_TEMPLATE = "Your answer could not be read: {error}. Answer again, exactly in the format asked."


@dataclass(eq=False)
class Request(Generic[T]):
    """One question for the model: what it is for, the messages, and how to read the answer.

    ``parse`` turns the answer's text into ``T`` or raises (a :class:`MemstreamError` or a
    ``ValueError``) naming what is wrong; the runner shows that to the model when it retries.
    ``salvage``, if given, reads what can be kept of an answer that still falls short after the
    retry (the hours the model did give, say), so a stage falls back item by item, not wholesale.
    ``remark``, if given, looks at the answer the stage will receive (first, retried or salvaged)
    and names a counter of :data:`~memstream.models.base.PROBLEMS` it earns, or None: what a stage
    makes of a usable answer (a decomposition stretched to fill its block) is counted, never silent.
    After a runner has answered, ``problem`` says why no usable answer was had (None if one was).
    """

    purpose: str
    messages: list[Message]
    parse: Callable[[str], T]
    salvage: Callable[[str], T] | None = None
    remark: Callable[[T], str | None] | None = None
    problem: str | None = None


Asked = Request[Any] | list[Request[Any]]
Stage = Generator[Asked, Any, R]
"""A stage: yields requests, receives their parsed answers (None where unusable), returns its result."""


def run_direct(stage: Stage[R], chat: ChatModel, problems: list[str] | None = None, *,
               fallback: ChatModel | None = None) -> R:
    """Drive ``stage`` to its end, answering each yield at once with ``chat`` (and ``fallback``
    where ``chat`` gives no usable answer; else the stage receives None).

    Reasons for answers that could not be had are logged and, if given, appended to ``problems``.
    """
    answer: Any = None
    while True:
        try:
            asked = stage.send(answer)
        except StopIteration as done:
            return done.value
        requests = asked if isinstance(asked, list) else [asked]
        answers = answer_all(chat, requests, fallback=fallback)
        if problems is not None:
            problems.extend(r.problem for r in requests if r.problem)
        answer = answers if isinstance(asked, list) else answers[0]


def concurrently(stages: list[Stage[Any]]) -> Stage[list[Any]]:
    """Drive ``stages`` side by side: each yield asks what every unfinished stage asks now, so
    independent questions share one round instead of waiting on each other. Returns their results.

    Stages are advanced in the order given, so whatever they do between questions happens in that order.
    """
    results: list[Any] = [None] * len(stages)
    asking: dict[int, Asked] = {}

    def advance(i: int, answer: Any) -> None:
        try:
            asking[i] = stages[i].send(answer)
        except StopIteration as done:
            results[i] = done.value
            asking.pop(i, None)

    for i in range(len(stages)):
        advance(i, None)
    while asking:
        shapes = [(i, asking[i]) for i in sorted(asking)]
        flat = [r for _, asked in shapes for r in (asked if isinstance(asked, list) else [asked])]
        answers = (yield flat) if flat else []
        position = 0
        for i, asked in shapes:
            if isinstance(asked, list):
                advance(i, answers[position:position + len(asked)])
                position += len(asked)
            else:
                advance(i, answers[position])
                position += 1
    return results


def answer_all(chat: ChatModel, requests: list[Request[Any]], *, fallback: ChatModel | None = None) -> list[Any]:
    """Parsed answers to ``requests``, in order: one batch, one retry batch, then the fallback per request."""
    answers: list[Any] = [None] * len(requests)
    try:
        texts = _complete(chat, [(r.purpose, r.messages) for r in requests])
    except EndpointFailingError as error:
        if fallback is None:  # a library call or a command: one clear error, nothing written
            raise
        texts = _texts_of(error, len(requests))  # a run: the rules stand in, and it stops at the step's end
    unreadable: list[tuple[int, str, str]] = []
    for i, (request, text) in enumerate(zip(requests, texts, strict=True)):
        if text is None:
            request.problem = f"{request.purpose}: the model call failed"
            chat.usage.count(request.purpose, "failed")
            continue
        try:
            answers[i] = request.parse(text)
        except UNREADABLE as error:
            unreadable.append((i, text, str(error)))
            if isinstance(error, ImplausibleAnswerError):
                chat.usage.count(request.purpose, "implausible")
    if unreadable:
        for i, _, _ in unreadable:
            chat.usage.count(requests[i].purpose, "retried")
        asked = [(requests[i].purpose, retry_messages(requests[i].messages, text, error))
                 for i, text, error in unreadable]
        try:
            again = _complete(chat, asked)
        except EndpointFailingError as error:
            if fallback is None:
                raise
            again = _texts_of(error, len(asked))
        for (i, first_text, first), text in zip(unreadable, again, strict=True):
            request = requests[i]
            try:
                if text is None:
                    raise MemstreamError(f"the retry call failed after: {first}")
                answers[i] = request.parse(text)
            except UNREADABLE as error:
                kept = _salvaged(request, [t for t in (text, first_text) if t])
                if kept is not None:
                    answers[i] = kept
                    chat.usage.count(request.purpose, "partial")
                else:
                    request.problem = f"{request.purpose}: unreadable twice ({error})"
                    chat.usage.count(request.purpose, "unusable")
    for request, answer in zip(requests, answers, strict=True):
        if answer is not None and request.remark is not None and (counter := request.remark(answer)):
            chat.usage.count(request.purpose, counter)
    lost = [i for i, r in enumerate(requests) if r.problem]
    for i in lost:
        log.warning("%s; %s", requests[i].problem, "the offline rules stand in" if fallback else "skipped")
    if fallback is not None and lost:
        stand_ins = _complete(fallback, [(requests[i].purpose, requests[i].messages) for i in lost])
        for i, text in zip(lost, stand_ins, strict=True):
            try:
                answers[i] = requests[i].parse(text) if text is not None else None
            except UNREADABLE:
                answers[i] = None
    return answers


def _salvaged(request: Request[Any], texts: list[str]) -> Any:
    """What ``request.salvage`` keeps of the retry's answer, else of the first; None if nothing."""
    if request.salvage is None:
        return None
    for text in texts:
        try:
            return request.salvage(text)
        except UNREADABLE:
            continue
    return None


def retry_messages(messages: list[Message], answer: str, error: str) -> list[Message]:
    """The conversation again, with the unreadable answer and what was wrong with it."""
    return [*messages, {"role": "assistant", "content": answer},
            {"role": "user", "content": RETRY_TEMPLATE.format(error=error)}]


def _complete(chat: ChatModel, calls: list[Call]) -> list[str | None]:
    """Answers to ``calls`` in one batch; if the batch fails, one by one, None for a call that fails for good."""
    if not calls:
        return []
    try:
        return list(chat.complete_many(calls, temperature=0.0))
    except (ReplayMissError, EndpointFailingError):
        raise
    except CallsFailedError as error:  # each call was tried its attempts: what failed is not asked again
        return _texts_of(error, len(calls))
    except MemstreamError as error:  # the back-end has already retried what is worth retrying
        if len(calls) == 1:
            log.warning("%s call failed: %s", calls[0][0], error)
            return [None]
        log.warning("a batch of %d calls failed (%s); asking one by one", len(calls), error)
    out: list[str | None] = []
    for purpose, messages in calls:
        try:
            out.append(chat.complete(messages, purpose=purpose, temperature=0.0))
        except (ReplayMissError, EndpointFailingError):
            raise
        except MemstreamError as error:
            log.warning("%s call failed: %s", purpose, error)
            out.append(None)
    return out


def _texts_of(error: MemstreamError, n: int) -> list[str | None]:
    """The answers a failed batch did get (None for the calls that failed), as the model counted them."""
    texts = getattr(error, "texts", None)
    return list(texts) if isinstance(texts, list) and len(texts) == n else [None] * n
