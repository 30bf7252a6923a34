"""Helpers the TUI tests share: the terminal size, and driving the app with Pilot until it
settles."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from pathlib import Path

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from monkeyllm.tui.app import BrowseApp

SIZE = (120, 40)


def drive(test):
    """Run an async Pilot test in its own event loop (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        asyncio.run(test(*args, **kwargs))

    return run


async def settle(pilot: Pilot[None]) -> None:
    """Let every worker finish and the screen catch up."""
    for _ in range(3):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:  # an exclusive worker replaced by a newer one
            pass
        await pilot.pause()


async def ready(pilot: Pilot[None]) -> BrowseApp:
    app = pilot.app
    assert isinstance(app, BrowseApp)
    for _ in range(500):
        if app.is_ready:
            break
        await pilot.pause(0.01)
    await settle(pilot)
    return app


async def go(pilot: Pilot[None], node_id: str) -> None:
    app = pilot.app
    assert isinstance(app, BrowseApp)
    app.browse.go(node_id)
    await settle(pilot)
    assert app.browse.current == node_id


async def press(pilot: Pilot[None], *keys: str) -> None:
    """Press ``keys`` and let the app settle."""
    await pilot.press(*keys)
    await settle(pilot)


async def press_at(pilot: Pilot[None], node_id: str, *keys: str) -> BrowseApp:
    """Once the app is ready: go to ``node_id``, press ``keys``, let the app settle."""
    app = await ready(pilot)
    await go(pilot, node_id)
    await press(pilot, *keys)
    return app


@contextlib.asynccontextmanager
async def opened_at(
    root: Path, node_id: str, *keys: str
) -> AsyncIterator[tuple[Pilot[None], BrowseApp]]:
    """``vine browse`` on ``root`` under Pilot, gone to ``node_id`` with ``keys`` pressed
    (:func:`press_at`): the pilot and the app."""
    async with BrowseApp(root).run_test(size=SIZE) as pilot:
        yield pilot, await press_at(pilot, node_id, *keys)
