"""``memstream.client``: call a ``memstream serve`` server the way the library is called (see
:mod:`memstream.service.client`)."""

from memstream.service import MemoryClient, ServiceError

__all__ = ["MemoryClient", "ServiceError"]
