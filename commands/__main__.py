"""``python -m monkeyllm.commands``: the same as ``vine``."""

from .main import main

main()
