"""A process that parses files for a catalog rebuild (``python -m monkeyllm.buildworker``).

It reads one pickled task from standard input, ``(root, first_gen, batches)``, and
writes one pickled answer per batch, in order, to standard output: ``("ok", rows)``
with the rows :func:`monkeyllm.indexing.parse_batch` makes, or ``("error", text)``.
A fresh interpreter, not a fork: the process that asks may hold threads and
connections, and its main module is never imported again.
"""

from __future__ import annotations

import os
import pickle
import sys


def main() -> int:
    """Serve one task; returns the exit status."""
    from .indexing import parse_batch

    # Below the process that inserts what this one parses: on a busy machine, the
    # inserting is what a rebuild waits for.
    try:
        os.nice(5)
    except OSError:
        pass
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    root, first_gen, batches = pickle.load(reader)
    for items in batches:
        try:
            answer: tuple[str, object] = ("ok", parse_batch(root, first_gen, items))
        except Exception as exc:  # noqa: BLE001 - reported to the builder, which parses it again
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, writer, protocol=pickle.HIGHEST_PROTOCOL)
        writer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
