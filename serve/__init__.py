"""``vine serve``: a forest over the Model Context Protocol, on stdio or streamable HTTP.

``tools`` describes the tools (from the engine's registry, plus ``forests``, ``view``
and ``ingest``), ``forests`` holds the open forests, ``dispatch`` runs one tool call
and ``server`` / ``http`` adapt that to the MCP SDK. Only ``server`` and ``http``
import the SDK, and nothing imports them until a server starts.
"""
