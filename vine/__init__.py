"""monkeyllm: forests of markdown knowledge that agents and people navigate.

    from monkeyllm import Vine

    with Vine("./brain", writable=False) as vine:
        vine.locate("exchange policy deadlines", k=3)
"""

from .errors import VineError
from .registry import CALLS
from .vine import Vine

__version__ = "0.1.0"
__all__ = ["CALLS", "Vine", "VineError", "__version__"]
