"""What one request may ask of the service, each limit named once (the HTTP layer, the docs and the tests
read them here). Over a limit is a :class:`~.errors.TooLarge` naming the limit, never a slow server."""

#: The largest request body, in bytes (a batch of :data:`MAX_ENTRIES` long turns fits well inside).
MAX_BODY_BYTES = 1_000_000
#: Entries one ``add`` may carry (a client with more sends several calls).
MAX_ENTRIES = 100
#: The largest context budget, in tokens (more than any model's prompt the designs are measured for).
MAX_BUDGET = 32_000
#: Records one page of ``list`` holds at most.
MAX_PAGE_SIZE = 500
#: Ranked records one ``search`` returns at most.
MAX_RESULTS = 100
#: The longest query, in characters.
MAX_QUERY_CHARS = 10_000
#: Scopes (tenants) one server holds open per design; each is a connection and the memory read through it.
MAX_SCOPES = 64
