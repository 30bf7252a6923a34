"""The Station: every forest under a folder over REST, behind API keys.

``store`` holds the Station's own SQLite state (``<root>/.station/station.db``),
``keys`` mints and checks API keys (each one a grant on one forest), ``policy``
decides what a key may call and see, ``scope`` cuts engine responses down to what a
scoped key may see, ``audit`` records every call, ``status`` maps envelopes to HTTP,
``openapi`` describes the routes from the registry, ``core`` is the Station and one
call's whole path (key, forest, scoped call, audit row), ``mcp`` the ``/mcp`` endpoint
and ``app`` the ASGI application of both; ``answer`` is the composite that asks a
model. Starlette is imported by ``app`` and ``mcp`` (the MCP SDK's own web stack), the
SDK by ``mcp`` alone, and nothing imports either until a Station starts.
"""
