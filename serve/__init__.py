"""``vine serve``: a forest over the Model Context Protocol, on stdio or streamable HTTP.

``tools`` describes the tools (from the engine's registry, plus ``forests``, ``view``
and ``ingest``), ``forests`` holds the open forests, ``dispatch`` runs one tool call
and ``server`` / ``http`` adapt that to the MCP SDK. Here only ``server`` and ``http``
import the SDK (the Station's ``monkeyllm.serve.station.mcp`` does too, for ``/mcp``),
and nothing imports any of them until a server starts.
"""
