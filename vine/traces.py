"""The trace of a session: one JSON line per call in ``_derived/traces/<session>.jsonl``
(what was called, on which id, the tokens in and out, how long, the error code), best
effort: a trace that cannot be written never fails a call."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import IO, Any

from . import budget
from .errors import is_error
from .registry import Call

# Sessions whose trace files are kept: one-shot processes (a `vine` call in a shell
# loop) each start a session, and their files would pile up without end.
TRACES_KEPT = 500


def _prune(folder: Path) -> None:
    """Delete the oldest trace files beyond the newest TRACES_KEPT (best effort)."""
    try:
        entries = [
            (e.stat().st_mtime_ns, e.path)
            for e in os.scandir(folder)
            if e.name.endswith(".jsonl") and e.is_file()
        ]
    except OSError:
        return
    if len(entries) < TRACES_KEPT:
        return
    entries.sort()
    for _, path in entries[: len(entries) - TRACES_KEPT + 1]:
        try:
            os.unlink(path)
        except OSError:
            pass


class TraceLog:
    """One session's trace file, opened on the first call (threads share it)."""

    def __init__(self, root: Path, session: str) -> None:
        self.root = root
        self.session = session
        self._file: IO[str] | None = None
        self._lock = threading.Lock()

    def record(
        self, spec: Call, args: dict[str, Any], result: dict[str, Any], started: float
    ) -> None:
        """Append one call's line."""
        try:
            with self._lock:
                if self._file is None:
                    folder = self.root / "_derived" / "traces"
                    folder.mkdir(parents=True, exist_ok=True)
                    _prune(folder)
                    self._file = open(
                        folder / f"{self.session}.jsonl",
                        "a",  # noqa: SIM115
                        encoding="utf-8",
                        buffering=1,
                    )
            first = spec.params[0].name if spec.params else None
            line = {
                "ts": round(time.time(), 3),
                "session": self.session,
                "primitive": spec.name,
                "id": args.get("id") if first == "id" and isinstance(args.get("id"), str) else None,
                "tokens_in": budget.cost(args),
                "tokens_out": budget.cost(result),
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
            }
            if is_error(result):
                line["error"] = result["error"].get("code")
            with self._lock:
                if self._file is not None:
                    self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        except (OSError, TypeError, ValueError):
            self._file = None

    def close(self) -> None:
        """Close the file (a later call opens it again)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
