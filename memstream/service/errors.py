"""The errors the service answers with, each carrying the HTTP status it is sent as.

One source of truth for both ends: :mod:`.http` answers a :class:`ServiceError` with its ``status`` and its
one-line message, and :mod:`.client` raises the same class again from the status, so a caller of the client
catches what a caller of :class:`~.core.MemoryService` catches. Every one is a
:class:`~memstream.errors.MemstreamError`: the message says what went wrong and how to fix it.
"""

from __future__ import annotations

from typing import ClassVar

from memstream.errors import MemstreamError


class ServiceError(MemstreamError):
    """A request the service refuses; ``status`` is how HTTP says so."""

    status: ClassVar[int] = 400


class BadRequest(ServiceError):
    """Input that cannot be used as sent (a bad owner name, a time without a zone, a design not served)."""

    status = 422


class Unauthorized(ServiceError):
    """No token, or one the server does not know."""

    status = 401


class Forbidden(ServiceError):
    """A write for an owner the token is not allowed (a read of one answers :class:`NotFound`, as an unknown
    owner does, so a token learns nothing of owners it may not use)."""

    status = 403


class NotFound(ServiceError):
    """An owner with no memory (or one the token may not see), or a record the owner does not have."""

    status = 404


class NotAllowed(ServiceError):
    """The design, or the store, refuses the operation (an append-only design asked to delete a record, a
    design that keeps no versions asked for history, a store opened read-only asked to write)."""

    status = 409


class TooLarge(ServiceError):
    """Over one of the limits (:mod:`.limits`): the body, the entries in one call, the budget, a page."""

    status = 413


class Unavailable(ServiceError):
    """The store cannot be reached or written just now (a database restarting, a disk gone read-only): the
    request did nothing and may be sent again."""

    status = 503


#: Each status the service answers with, as the error a client raises for it.
BY_STATUS: dict[int, type[ServiceError]] = {
    c.status: c for c in (BadRequest, Unauthorized, Forbidden, NotFound, NotAllowed, TooLarge, Unavailable)}
BY_STATUS[400] = BadRequest
