"""The Canopy's maintenance on :class:`~monkeyllm.Vine` (not calls, like ``reindex``):
binding the query embedder, building, status and dropping the index."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import SchemaError

if TYPE_CHECKING:
    from ..forest import Forest
    from ..plumbing import Gate
    from . import Progress
    from .embedders import EmbedderConfig


def embedder_of(embedder: object) -> EmbedderConfig | None:
    """The checked configuration of an embedder given as a config, its dict form or None;
    ``E_SCHEMA`` for anything else or a bad configuration."""
    from .embedders import EmbedderConfig

    if embedder is None:
        return None
    if isinstance(embedder, dict):
        return EmbedderConfig.from_public(embedder)
    if isinstance(embedder, EmbedderConfig):
        return embedder.checked()
    raise SchemaError(
        f"embedder must be an EmbedderConfig, its dict form or None, got "
        f"{type(embedder).__name__} {embedder!r:.60}",
        hint='e.g. {"kind": "http", "url": "http://127.0.0.1:11434/v1", "model": "..."}, '
        'or {"kind": "local"}.',
    )


class CanopyMethods:
    """What :class:`~monkeyllm.Vine` offers for its forest's Canopy."""

    _forest: Forest
    _gate: Gate

    def bind_embedder(self, embedder: EmbedderConfig | dict[str, Any] | None) -> None:
        """Bind the query embedder hybrid ranking uses on this forest (a Station binds
        one per forest); None unbinds it. Raises ``VineError`` (``E_SCHEMA``) for a bad
        configuration."""
        self._forest.embedder = embedder_of(embedder)

    def canopy_build(
        self,
        embedder: EmbedderConfig | dict[str, Any] | None = None,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """Build or bring up to date the forest's Canopy (``_derived/canopy/``): embed
        every node whose vector is missing or out of date, in batches.

        Args:
            embedder: The embedder to build with (default: the bound one, else the
                environment's, else the index's own, else the local model). Another
                embedder than the index's rebuilds it; its configuration is kept in the
                index (never committed), so later reads use it.
            rebuild: Re-embed every node.
            progress: ``progress(done, total)`` after each batch.

        Returns the status (see :meth:`canopy_status`) with ``built``. Raises
        ``VineError``: ``E_SCHEMA`` (the extra is missing, a bad configuration),
        ``E_PROVIDER`` or ``E_TIMEOUT`` (an endpoint failed; finished batches stay).
        """
        from ..argcheck import flag, function
        from . import build

        flag(rebuild, "rebuild")
        function(progress, "progress", "a function called as progress(done, total)")
        with self._gate.entered():
            chosen = embedder_of(embedder)
            self._forest.catalog.sync()
            return build(self._forest, chosen, rebuild=rebuild, progress=progress)

    def canopy_status(self) -> dict[str, Any]:
        """The Canopy's state: whether there is one, its embedder (name, model,
        dimension), how many nodes are embedded and how many stale, its size, and
        whether this process's query embedder matches it."""
        from . import status

        with self._gate.entered():
            return status(self._forest)

    def canopy_drop(self) -> dict[str, Any]:
        """Delete the forest's Canopy; locate and harvest rank lexically until the next
        build."""
        from . import drop

        with self._gate.entered():
            return drop(self._forest)
