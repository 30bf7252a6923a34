"""monkeyllm: forests of markdown knowledge that agents and people navigate.

from monkeyllm import Vine

with Vine("./brain", writable=False) as vine:
    vine.locate("exchange policy deadlines", k=3)
"""

from typing import Any

from .errors import VineError
from .registry import CALLS
from .vine import Vine

__all__ = ["CALLS", "Vine", "VineError", "__version__"]


def __getattr__(name: str) -> Any:
    # The version is pyproject.toml's, read from the installed package's metadata on
    # first use (importlib.metadata is not worth its import to a one-shot command).
    if name == "__version__":
        from importlib.metadata import version

        found = globals()["__version__"] = version("monkeyllm")
        return found
    raise AttributeError(f"module 'monkeyllm' has no attribute {name!r}")
