"""The one registry of calls: documented, typed, and importable without surface stacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from monkeyllm import CALLS, Vine

from .conftest import REPO

READS = ["locate", "look", "move", "pick", "scan", "sniff", "history", "calendar",
         "coverage", "query"]
WRITES = ["plant", "graft", "tend", "prune", "transplant"]
# Calls whose every parameter has a default (they cover the whole forest unless told).
NO_REQUIRED = ("calendar", "coverage")


def test_the_reads_and_writes_are_registered_in_order() -> None:
    assert [name for name, spec in CALLS.items() if spec.kind == "read"] == READS
    assert [name for name, spec in CALLS.items() if spec.kind == "write"] == WRITES


@pytest.mark.parametrize("name", list(CALLS))
def test_every_call_is_documented_and_typed(name: str) -> None:
    spec = CALLS[name]
    assert spec.summary
    assert bool(spec.budget) == (spec.kind != "write")
    assert spec.params and spec.params[0].required == (name not in NO_REQUIRED)
    for param in spec.params:
        assert param.doc, f"{name}.{param.name} has no description"
        assert param.schema(), f"{name}.{param.name} has no JSON type"
    schema = spec.input_schema()
    json.dumps(schema)
    assert schema["required"] == [p.name for p in spec.params if p.required]
    assert getattr(Vine, name).__vine_call__ is spec


@pytest.mark.parametrize("name", list(CALLS))
def test_the_readme_lists_every_call(name: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"| `{name}(" in readme


def test_importing_the_engine_loads_no_surface_stack() -> None:
    code = ("import sys, monkeyllm; from monkeyllm import Vine; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'typer','rich','textual','starlette','mcp','uvicorn','fastapi','httpx'}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.strip()
    assert out == "[]"
