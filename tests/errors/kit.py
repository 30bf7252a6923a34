"""Helpers the argument-boundary tests share: an audit hook recording what the engine
touched, the forest, and an independent oracle for the signature types."""

from __future__ import annotations

from typing import Any

from monkeyllm import CALLS

SENTINEL = "SENTINEL-e7c41f-never-leaves"
READS = sorted(name for name, spec in CALLS.items() if spec.kind == "read")


_AUDIT: dict[str, Any] = {"on": False, "paths": []}
