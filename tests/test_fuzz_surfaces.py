"""Hypothesis-generated arguments for every call, through every surface: the engine
(``Vine.call``), the CLI (``vine call NAME JSON``) and the MCP dispatch layer. Every
response is a result or an error envelope, never ``E_INTERNAL``, and fits the call's
budget."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from monkeyllm import Vine, budget
from monkeyllm.commands.app import app
from monkeyllm.registry import CALLS, Call
from monkeyllm.serve.dispatch import Dispatcher
from monkeyllm.serve.forests import Forests

from .forestkit import copy_sample

# Values that reach deep into the calls: real ids, sections, SQL and terms of sample-brain.
REAL = [
    "sales/exchange-policy",
    "sales/orders-2026",
    "sales/_index",
    "sales",
    "_index",
    "Exchange window",
    "orders",
    "SELECT * FROM orders LIMIT 3",
    "UPDATE orders SET region = 'x' WHERE id = 'none'",
    "related-to",
    "children",
    "exchange",
    "2026-01-01",
    "note",
    "branch",
    "dataset",
]

JUNK_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(
        [
            "",
            "\x00",
            "a\x00b",
            "../..",
            "/etc/passwd",
            "é" * 300,
            "x" * 20_000,
            "[[",
            "---",
            "\ud7ff",
            "💥" * 50,
            " ",
            "\n",
        ]
    ),
)
TEXT = st.one_of(st.sampled_from(REAL), JUNK_TEXT)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.integers(min_value=2**63, max_value=2**80),
    TEXT,
)
JUNK = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=8,
)


def _of(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values fitting a parameter's schema, or anything at all now and then."""
    if "anyOf" in schema:
        fitting: st.SearchStrategy[Any] = st.one_of([_of(s) for s in schema["anyOf"]])
    elif "enum" in schema:
        fitting = st.sampled_from(schema["enum"])
    else:
        kind = schema.get("type")
        if kind == "string":
            fitting = TEXT
        elif kind == "integer":
            fitting = st.one_of(st.integers(-3, 60), st.integers())
        elif kind == "number":
            fitting = st.one_of(st.floats(-2, 2), st.floats())
        elif kind == "boolean":
            fitting = st.booleans()
        elif kind == "array":
            fitting = st.lists(_of(schema.get("items", {})), max_size=12)
        elif kind == "object":
            fitting = st.deferred(lambda: OBJECTS)
        else:
            fitting = JUNK
    return st.one_of(fitting, fitting, fitting, JUNK)


NODE = st.fixed_dictionaries(
    {
        "id": st.one_of(st.just("sales/fuzzed"), TEXT),
        "type": TEXT,
        "parent": st.one_of(st.just("sales/_index"), TEXT),
        "title": TEXT,
        "summary": TEXT,
    },
    optional={
        "body": TEXT,
        "tags": JUNK,
        "links": JUNK,
        "confidence": SCALAR,
        "schema": JUNK,
        "rows": JUNK,
        "aliases": JUNK,
        "source": JUNK,
    },
)
PATCH = st.fixed_dictionaries(
    {},
    optional={
        "set_frontmatter": st.one_of(st.dictionaries(TEXT, SCALAR, max_size=3), JUNK),
        "add_links": st.one_of(
            st.lists(st.fixed_dictionaries({"rel": TEXT, "target": TEXT}), max_size=3), JUNK
        ),
        "remove_links": JUNK,
        "append_section": st.one_of(st.fixed_dictionaries({"header": TEXT, "body": TEXT}), JUNK),
        "replace_section": st.one_of(st.fixed_dictionaries({"header": TEXT, "body": TEXT}), JUNK),
        "replace_body": TEXT,
    },
)
OBJECTS = st.one_of(NODE, PATCH, st.dictionaries(TEXT, JUNK, max_size=4))


def arguments(spec: Call) -> st.SearchStrategy[dict[str, Any]]:
    """Argument objects for a call: its parameters drawn from its schema (required ones
    mostly present), sometimes an unknown key."""
    schema = spec.input_schema()
    required = {k: _of(v) for k, v in schema["properties"].items() if k in schema["required"]}
    optional = {k: _of(v) for k, v in schema["properties"].items() if k not in schema["required"]}
    base = st.fixed_dictionaries(required, optional=optional)
    extra = st.dictionaries(st.sampled_from(["bogus", "forest", "id", ""]), JUNK, max_size=1)
    return st.one_of(
        base,
        base,
        base,
        st.tuples(base, extra).map(lambda t: {**t[0], **t[1]}),
        st.dictionaries(TEXT, JUNK, max_size=3),
    )


NAMES = [name for name in CALLS if name != "answer"]
FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def check(name: str, args: Any, out: Any) -> None:
    """A result or an envelope, never E_INTERNAL, within the call's budget."""
    assert isinstance(out, dict), (name, args, out)
    if "error" in out:
        error = out["error"]
        assert set(error) >= {"code", "message"}, out
        assert error["code"] != "E_INTERNAL", (name, args, out)
    limit = CALLS[name].budget
    if limit is not None:
        assert budget.cost(out) <= limit, (name, args, budget.cost(out))


@pytest.fixture(scope="module")
def forests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A read-only copy for reads, and one writable git copy per surface for writes."""
    base = tmp_path_factory.mktemp("fuzz")
    reads = copy_sample(base / "reads")
    engine_w = copy_sample(base / "engine", git=True)
    cli_w = copy_sample(base / "cli", git=True)
    mcp_w = copy_sample(base / "mcp", git=True)
    with Vine(reads, writable=False) as reader, Vine(engine_w) as writer:
        served = Forests(forest=mcp_w, writable=True)
        try:
            yield {
                "reads": reads,
                "cli": cli_w,
                "reader": reader,
                "writer": writer,
                "mcp": Dispatcher(served),
            }
        finally:
            served.close()


@pytest.mark.parametrize("name", NAMES)
def test_engine_answers_every_argument_object(forests: dict[str, Any], name: str) -> None:
    vine = forests["reader"] if CALLS[name].read_only else forests["writer"]

    @FUZZ
    @given(args=arguments(CALLS[name]))
    def run(args: dict[str, Any]) -> None:
        check(name, args, vine.call(name, args))

    run()


@pytest.mark.parametrize("name", NAMES)
def test_cli_answers_every_argument_object(forests: dict[str, Any], name: str) -> None:
    root = forests["reads"] if CALLS[name].read_only else forests["cli"]
    runner = CliRunner()

    @settings(FUZZ, max_examples=6)
    @given(args=arguments(CALLS[name]))
    def run(args: dict[str, Any]) -> None:
        done = runner.invoke(app, ["call", name, json.dumps(args), "--forest", str(root), "--json"])
        assert done.exit_code in (0, 1), (args, done.exit_code, done.output[-500:])
        assert done.exception is None or isinstance(done.exception, SystemExit), (
            args,
            repr(done.exception),
        )
        check(name, args, json.loads(done.stdout))

    run()


@pytest.mark.parametrize("name", NAMES)
def test_mcp_dispatch_answers_every_argument_object(forests: dict[str, Any], name: str) -> None:
    dispatcher: Dispatcher = forests["mcp"]
    tool = next(s.name for s in dispatcher.specs if s.call == name)

    @settings(FUZZ, max_examples=8)
    @given(args=arguments(CALLS[name]))
    def run(args: dict[str, Any]) -> None:
        check(name, args, dispatcher.run(tool, args).result)

    run()


def test_the_check_catches_an_internal_error() -> None:
    with pytest.raises(AssertionError):
        check("look", {}, {"error": {"code": "E_INTERNAL", "message": "boom"}})


@pytest.mark.parametrize(
    "args",
    [
        {"query": "x" * 20_000},  # echoed whole, no results
        {"query": "exchange", "terms": ["y" * 20_000] * 8},  # explicit terms echoed
    ],
)
def test_harvest_refuses_what_it_could_not_echo_within_budget(
    forests: dict[str, Any], args: dict[str, Any]
) -> None:
    out = forests["reader"].call("harvest", args)
    assert out["error"]["code"] == "E_SCHEMA", out
    check("harvest", args, out)


def test_harvest_at_its_length_limits_fits_its_budget(forests: dict[str, Any]) -> None:
    args = {
        "query": " ".join(f"w{i}" + "x" * 95 for i in range(10)),
        "terms": [f"t{i}" + "y" * 198 for i in range(8)],
    }
    out = forests["reader"].call("harvest", args)
    assert "error" not in out, out
    check("harvest", args, out)


def test_an_unknown_parameter_is_not_echoed_whole(forests: dict[str, Any]) -> None:
    args = {"x" * 20_000: None}
    out = forests["reader"].call("harvest", args)
    assert out["error"]["code"] == "E_SCHEMA" and len(out["error"]["message"]) < 200, out
    check("harvest", args, out)


@pytest.mark.parametrize(
    "name, args",
    [
        ("scan", {"parent_id": "x" * 20_000}),
        ("look", {"id": "x" * 20_000}),
        ("move", {"id": "y" * 20_000}),
    ],
)
def test_an_envelope_quoting_a_huge_argument_fits_the_budget(
    forests: dict[str, Any], name: str, args: dict[str, Any]
) -> None:
    out = forests["reader"].call(name, args)
    assert "error" in out, out
    check(name, args, out)
