"""``python -m monkeyllm.commands``: the same as ``vine``."""

from .app import main

main()
