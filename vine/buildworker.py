"""A process that parses files for a catalog rebuild (``python -m monkeyllm.buildworker``).

It reads one pickled task from standard input, ``(root, first_gen, batches, part)``,
and writes one answer per batch, in order, to standard output: ``("ok", rows)`` with
the rows :func:`monkeyllm.indexing.parse_batch` makes, or ``("error", text)``, pickled,
each behind its length (8 bytes, little-endian), so the process that reads them can
take the bytes off the pipe without unpickling them there (:func:`frame`).

``part`` is None, or ``(path, start)``: the body lines of batches ``start`` and on are
not sent but written into a body index table of this process's own at ``path``
(:mod:`monkeyllm.bodyshard`), and one answer more follows the batches': ``("part",
counts)``, that table's vocabulary, once it is merged and closed.
A fresh interpreter, not a fork: the process that asks may hold threads and
connections, and its main module is never imported again.
"""

from __future__ import annotations

import os
import pickle
import sys

# The length before each answer.
HEADER = 8


def frame(answer: tuple[str, object]) -> bytes:
    """One answer as it goes down the pipe: its pickle's length, then the pickle."""
    data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(HEADER, "little") + data


def main() -> int:
    """Serve one task; returns the exit status."""
    from . import bodyshard
    from .indexing import parse_batch

    # Below the process that inserts what this one parses: on a busy machine, the
    # inserting is what a rebuild waits for.
    try:
        os.nice(5)
    except OSError:
        pass
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    root, first_gen, batches, part = pickle.load(reader)
    table = None
    for number, items in enumerate(batches):
        try:
            rows = parse_batch(root, first_gen, items)
            if part is not None and number >= part[1]:
                if table is None:
                    table = bodyshard.Writer(part[0])
                for name, payload in rows:
                    if name == "lines":
                        table.add(payload)
                rows = [(name, payload) for name, payload in rows if name != "lines"]
            answer: tuple[str, object] = ("ok", rows)
        except Exception as exc:  # noqa: BLE001 - reported to the builder, which parses it again
            answer = ("error", f"{type(exc).__name__}: {exc}")
        writer.write(frame(answer))
        writer.flush()
    if part is not None:
        try:
            if table is None:
                table = bodyshard.Writer(part[0])
            answer = ("part", table.finish())
        except Exception as exc:  # noqa: BLE001 - the builder indexes those lines itself
            answer = ("error", f"{type(exc).__name__}: {exc}")
        writer.write(frame(answer))
        writer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
