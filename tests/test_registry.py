"""The one registry of calls: documented, typed, and importable without surface stacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from monkeyllm import CALLS, Vine

from .forestkit import REPO

READS = "locate look move pick scan sniff history calendar coverage query".split()
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
    code = (
        "import sys, monkeyllm; from monkeyllm import Vine; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'typer','rich','textual','starlette','mcp','uvicorn','fastapi','httpx'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert out == "[]"


# -- limits: one source of truth -------------------------------------------------------------


def _ranges() -> list[tuple[str, str, int, int]]:
    """(call, parameter, lo, hi) of every bounded integer parameter of the engine."""
    from monkeyllm.limits import Range, options, split

    out = []
    for name, spec in CALLS.items():
        for p in spec.params:
            for option in options(p.annotated):
                base, limits = split(option)
                for limit in limits:
                    if isinstance(limit, Range) and base is int:
                        lo, hi = limit.bounds()
                        out.append((name, p.name, int(lo), int(hi)))
    return out


RANGES = _ranges()


def test_the_bounded_parameters_are_the_ones_the_issue_names() -> None:
    found = {(name, param) for name, param, _, _ in RANGES}
    assert {("locate", "k"), ("sniff", "k"), ("scan", "limit"), ("harvest", "k")} <= found


@pytest.mark.parametrize(
    ("name", "param", "lo", "hi"), RANGES, ids=[f"{n}.{p}" for n, p, _, _ in RANGES]
)
def test_a_bound_reaches_the_check_the_schema_and_the_help(
    name: str, param: str, lo: int, hi: int
) -> None:
    from monkeyllm.commands.calls import param_help
    from monkeyllm.commands.params import shape_of
    from monkeyllm.registry import check_args

    spec = CALLS[name]
    p = next(x for x in spec.params if x.name == param)
    schema = spec.input_schema()["properties"][param]
    assert (schema["minimum"], schema["maximum"]) == (lo, hi)
    base = {q.name: "xx" for q in spec.params if q.required}
    for bad in (lo - 1, hi + 1):
        with pytest.raises(Exception) as refused:
            check_args(spec, {**base, param: bad})
        assert f"from {lo} to {hi}" in str(refused.value)
    assert check_args(spec, {**base, param: hi})[param] == hi
    assert check_args(spec, {**base, param: float(lo)})[param] == lo  # JSON's 3.0 is 3
    assert f"from {lo} to {hi}" in param_help(p, shape_of(p))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_null_is_declared_exactly_where_it_means_absent(name: str) -> None:
    from monkeyllm.registry import check_args

    spec = CALLS[name]
    schema = spec.input_schema()
    base = {q.name: "xx" for q in spec.params if q.required}
    for p in spec.params:
        declared = schema["properties"][p.name]
        kind = declared.get("type")
        takes_null = (isinstance(kind, list) and "null" in kind) or {
            "type": "null"
        } in declared.get("anyOf", [])
        assert takes_null == (not p.required), (name, p.name)
        if not p.required and all(isinstance(base[q], str) for q in base):
            try:
                clean = check_args(spec, {**base, p.name: None})
            except Exception:  # the required ones here are not of their type: plant, graft
                continue
            assert p.name not in clean


def test_closed_sets_are_enums() -> None:
    look = CALLS["look"].input_schema()["properties"]["fields"]
    assert "summary" in look["items"]["enum"] and "nope" not in look["items"]["enum"]
    include = CALLS["locate"].input_schema()["properties"]["include"]
    assert include["items"]["enum"] == ["outline"]
    scan = CALLS["scan"].input_schema()["properties"]["fields"]["items"]["enum"]
    assert {"id", "payload_type", "heat"} <= set(scan)
    with Vine(REPO / "sample-brain", writable=False) as vine:
        assert vine.look("sales/exchange-policy", fields=["nope"])["error"]["code"] == "E_SCHEMA"
        assert vine.locate("x", include=["body"])["error"]["code"] == "E_SCHEMA"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_call_has_a_result_shape(name: str) -> None:
    """A call added to the registry needs its shape in monkeyllm.shapes.RESULTS: the
    keys its result always holds (the MCP outputSchema and OpenAPI 200 are built
    from it)."""
    from monkeyllm.shapes import RESULTS

    assert name in RESULTS, f"{name} has no result shape in monkeyllm/shapes.py"
    shape = CALLS[name].output_schema()
    json.dumps(shape)
    assert shape.get("required") or all(a.get("required") for a in shape["anyOf"])


NEWER_DRAFT_KEYWORDS = {
    "$defs",
    "$dynamicRef",
    "$dynamicAnchor",
    "prefixItems",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$anchor",
    "$vocabulary",
}


def _keywords(schema: object) -> set[str]:
    if isinstance(schema, dict):
        found = set(schema)
        for key, value in schema.items():
            if key != "properties":
                found |= _keywords(value)
            else:
                for sub in value.values():
                    found |= _keywords(sub)
        return found
    if isinstance(schema, list):
        return set().union(*(_keywords(item) for item in schema)) if schema else set()
    return set()


def test_tool_output_schemas_name_draft_07_and_use_only_its_keywords() -> None:
    """A client that checks an output schema against its meta-schema on every call (the
    1.x SDK does) reads the dialect from ``$schema``: every tool names draft-07, which
    is valid against draft-07's meta-schema and uses no keyword a later draft added."""
    import jsonschema

    from monkeyllm.serve.station.mcp import tools
    from monkeyllm.serve.tools import tool_specs

    served = [(spec.name, spec.output_schema) for spec in tool_specs()]
    station = [(tool.name, tool.output_schema) for tool in tools()]
    for name, schema in served + station:
        assert schema is not None, name
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#", name
        assert jsonschema.validators.validator_for(schema) is jsonschema.Draft7Validator
        jsonschema.Draft7Validator.check_schema(schema)
        assert not _keywords(schema) & NEWER_DRAFT_KEYWORDS, name


def test_the_kind_words_a_signature_accepts_are_the_kind_table() -> None:
    """locate's scope and scan's kind filter take exactly the words of one table, each
    naming the catalog kind it keeps ("notes" and "note": every leaf)."""
    import typing

    from monkeyllm import kinds
    from monkeyllm.argtypes import ScanFilter, Scope

    assert set(typing.get_args(Scope)) == set(kinds.SCOPES)
    kind_words = typing.get_args(typing.get_type_hints(ScanFilter)["kind"])
    assert set(kind_words) == set(kinds.FILTER_KINDS)
    assert kinds.SCOPES["notes"] == kinds.FILTER_KINDS["note"] == kinds.BANANA
    with Vine(REPO / "sample-brain", writable=False) as vine:
        notes = vine.locate("exchange policy", k=20, scope="notes")["results"]
        leaves = vine.scan(
            "_index",
            filter={"kind": "note"},
            fields=["id", "type", "kind"],
            recursive=True,
            limit=50,
        )["nodes"]
    assert notes and {r["kind"] for r in notes} == {kinds.BANANA}
    assert {n["kind"] for n in leaves} == {kinds.BANANA}
    assert len({n["type"] for n in leaves}) > 1  # every leaf, not only type: note
