"""The errors memstream raises for a user's mistake.

Anything derived from :class:`MemstreamError` is the user's to fix (a bad file,
an unknown owner, a naive time ...). The CLI prints its message as one line and
exits with code 2; library callers catch it like any exception.
"""

import importlib
from types import ModuleType


class MemstreamError(Exception):
    """A problem with the input that the user can fix; the message says how."""


class StructuredOutputError(MemstreamError):
    """A model answer that does not parse into the expected structure."""


class ImplausibleAnswerError(StructuredOutputError):
    """An answer that parses but does not make sense against what memstream knows (the agent's identity,
    the clock, the plan, the town, the cited evidence): a sense check refused it, naming why, so the one
    retry shows the model the problem. Counted as ``implausible`` for its purpose (``docs/sense-checks.md``)."""


class ReplayMissError(MemstreamError):
    """A call not in a replay-only cache: a setup problem, never papered over by a fallback."""


class EndpointFailingError(MemstreamError):
    """The model endpoint failed too many requests in a row (the circuit breaker opened).

    Raised instead of sending more requests to an endpoint that is down, so a run stops within a
    bound instead of stalling on timeouts. ``partial`` holds what a batch did get before it opened
    (a :class:`~memstream.models.base.Completion` or a :class:`~memstream.models.base.Failure` per call);
    ``texts`` the answers' texts (None for a call that failed), once the chat model has counted them.
    """

    def __init__(self, message: str, partial: list | None = None) -> None:
        super().__init__(message)
        self.partial = partial or []
        self.texts: list[str | None] | None = None


class CallsFailedError(MemstreamError):
    """Some calls of a batch failed for good (after their attempts); the others were answered.

    ``partial`` holds a Completion or a Failure per call, in order, so the answers had are kept
    (and cached) and each failed call is asked no more than its attempts; ``texts`` their texts
    (None for a call that failed), once the chat model has counted them.
    """

    def __init__(self, message: str, partial: list) -> None:
        super().__init__(message)
        self.partial = partial
        self.texts: list[str | None] | None = None


class CallInterrupted(BaseException):  # a stop, like KeyboardInterrupt, not a failure
    """Ctrl-C or SIGTERM arrived while a model call was in flight: the call is abandoned at once.

    A ``BaseException`` (as ``KeyboardInterrupt``), so no ``except Exception`` on the way up turns
    it into a failed call that a fallback would answer. ``why`` is ``interrupted`` or ``terminated``.
    """

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class MissingExtraError(MemstreamError):
    """A feature whose packages are one of memstream's optional extras, not installed here.

    ``pip install memstream`` installs the core (the stream, the designs, the town, the facts); the
    benchmarks' second embedder and the sweep's Ray are extras, so what needs one says which in one line.
    """

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(f"{feature} needs memstream[{extra}]: pip install 'memstream[{extra}]'")
        self.extra = extra


def import_extra(module: str, *, feature: str, extra: str) -> ModuleType:
    """``module``, imported when ``feature`` is first used; :class:`MissingExtraError` naming ``extra``
    when it (or a package it needs) is not installed, instead of a ModuleNotFoundError's traceback."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(feature, extra) from None
