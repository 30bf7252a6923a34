"""One tool call, run against the engine: the surface's whole logic, with no SDK in it.

A call answers an :class:`Outcome`: the engine's JSON object (a result or the error
envelope, never an exception) and, for ``view``, the image beside it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from monkeyllm.errors import SchemaError, VineError, is_error
from monkeyllm.hints import PYTHON, Spelling, spelled
from monkeyllm.registry import internal

from .forests import Forests
from .media import Image, view
from .tools import ToolSpec, tool_specs
from .upload import ingest_upload


@dataclass
class Outcome:
    """What one tool call answered."""

    tool: str
    forest: str | None
    result: dict[str, Any]
    ms: float
    image: Image | None = None

    @property
    def error_code(self) -> str | None:
        """The envelope's code, or None for a result."""
        return self.result["error"].get("code") if is_error(self.result) else None


class ReadOnlyServer(Spelling):
    """The calls' own spelling, on a server that may not write (``--readonly``)."""

    def open_writable(self) -> str:
        return (
            "This server serves its forests read-only (vine serve --readonly); writes "
            "need a server started without it."
        )


READ_ONLY_SERVER = ReadOnlyServer()


class Dispatcher:
    """Runs tool calls by wire name on the served forests."""

    def __init__(self, forests: Forests, prefix: str = "") -> None:
        self.forests = forests
        self.specs = tool_specs(prefix, registry=forests.registry)
        self.by_name: dict[str, ToolSpec] = {s.name: s for s in self.specs}
        # A read-only server offers only what it can run (so does one serving a forest
        # that is not its own git repository); a write named anyway still answers
        # E_READONLY, saying why.
        self.listed = [s for s in self.specs if forests.serves_writes or not s.writes]

    def run(self, name: str, arguments: dict[str, Any] | None) -> Outcome:
        """Run one tool call; every failure is an error envelope."""
        with spelled(PYTHON if self.forests.writable else READ_ONLY_SERVER):
            return self._run(name, arguments)

    def _run(self, name: str, arguments: dict[str, Any] | None) -> Outcome:
        started = time.perf_counter()
        forest: str | None = None
        image = None
        try:
            spec = self.by_name.get(name)
            if spec is None:
                raise SchemaError(
                    f"unknown tool: {name!r}",
                    hint="Tools: " + ", ".join(s.name for s in self.listed) + ".",
                )
            args = dict(arguments or {})
            if spec.call == "forests":
                if args:
                    raise SchemaError(
                        f"forests: unknown parameter {sorted(args)[0]!r}",
                        hint="forests takes no arguments.",
                    )
                result = self.forests.describe()
            else:
                forest, vine = self.forests.get(args.pop("forest", None), write=spec.writes)
                refused = self.forests.refuse_write(forest) if spec.writes else None
                if refused is not None:
                    raise refused
                if spec.call == "view":
                    unknown = sorted(set(args) - {"id"})
                    if unknown:
                        raise SchemaError(
                            f"view: unknown parameter {unknown[0]!r}", hint="view takes: id."
                        )
                    result, image = view(vine, args.get("id"))
                elif spec.call == "ingest":
                    unknown = sorted(set(args) - {"files", "into"})
                    if unknown:
                        raise SchemaError(
                            f"ingest: unknown parameter {unknown[0]!r}",
                            hint="ingest takes: files, into.",
                        )
                    result = ingest_upload(
                        vine, args.get("files"), args.get("into"), self.forests.upload_locks[forest]
                    )
                else:
                    result = vine.call(spec.call, args)
        except VineError as exc:
            result = exc.envelope()
        except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback
            result = internal(name, exc)
        ms = round((time.perf_counter() - started) * 1000, 2)
        return Outcome(name, forest, result, ms, image)
