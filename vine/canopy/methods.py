"""The Canopy's maintenance on :class:`~monkeyllm.Vine` (not calls, like ``reindex``):
binding the query embedder, building, status and dropping the index."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..forest import Forest
    from ..plumbing import Gate
    from . import Progress
    from .embedders import EmbedderConfig


class CanopyMethods:
    """What :class:`~monkeyllm.Vine` offers for its forest's Canopy."""

    _forest: Forest
    _gate: Gate

    def bind_embedder(self, embedder: EmbedderConfig | dict[str, Any] | None) -> None:
        """Bind the query embedder hybrid ranking uses on this forest (a Station binds
        one per forest); None unbinds it. Raises ``VineError`` (``E_SCHEMA``) for a bad
        configuration."""
        from .embedders import EmbedderConfig

        if isinstance(embedder, dict):
            embedder = EmbedderConfig.from_public(embedder)
        elif embedder is not None:
            embedder = embedder.checked()
        self._forest.embedder = embedder

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
        from . import build
        from .embedders import EmbedderConfig

        with self._gate.entered():
            if isinstance(embedder, dict):
                embedder = EmbedderConfig.from_public(embedder)
            self._forest.catalog.sync()
            return build(self._forest, embedder, rebuild=rebuild, progress=progress)

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
