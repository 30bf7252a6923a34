"""``vine reindex``: rebuild the catalog from the files."""

import sys

from . import common, options


def reindex(
    forest_argument: options.ForestArgument = None,
    forest: options.Forest = None,
    json: options.Json = False,
) -> None:
    """Rebuild the catalog (_derived/catalog.db) from the files; heat is kept.

    \b
    Example: vine reindex ./brain
    """
    as_json = common.json_mode(json)
    root = common.forest_of(forest_argument, forest)
    vine = common.open_vine(root, writable=False, as_json=as_json)
    try:
        if sys.stderr.isatty():
            from rich.console import Console

            with Console(stderr=True).status(f"Rebuilding the catalog of {vine.root} ..."):
                result = vine.reindex()
        else:
            result = vine.reindex()
    finally:
        vine.close()
    common.emit("reindex", result, as_json)
