"""The Station: every forest under a folder over REST, behind API keys.

``store`` holds the Station's own SQLite state (``<root>/.station/station.db``),
``keys`` mints and checks API keys (each one a grant on one forest), ``policy``
decides what a key may call and see, ``scope`` cuts engine responses down to what a
scoped key may see, ``audit`` records every call, ``status`` maps envelopes to HTTP,
``openapi`` describes the routes from the registry, and ``app`` is the ASGI
application. Only ``app`` imports Starlette, and nothing imports it until a Station
starts.
"""
