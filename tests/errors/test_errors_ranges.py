"""The argument boundary past the types: values well-typed but out of range, ids that try
to leave the forest, and any argument object fuzzed: an answer or a typed error, never
E_INTERNAL."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monkeyllm import CALLS, Vine
from monkeyllm.budget import dumps

from ..forestkit import assert_error, assert_ok, leaf, make_forest, reader
from .kit import _AUDIT, READS, SENTINEL


def _as_path(raw: str) -> str:
    if raw.startswith("file:"):
        raw = unquote(raw[5:].split("?", 1)[0])
    return os.path.realpath(raw)


@pytest.mark.parametrize(
    "call, args",
    [
        ("locate", {"query": "policy", "k": 2**63}),
        ("locate", {"query": "policy", "k": 10**30}),
        ("locate", {"query": "policy", "k": -(2**63)}),
        ("locate", {"query": "policy", "k": 0}),
        ("sniff", {"terms": "deadline", "k": 10**30}),
        ("sniff", {"terms": "deadline", "k": -5}),
        ("scan", {"parent_id": "sales", "limit": 10**30}),
        ("scan", {"parent_id": "sales", "limit": -1}),
        ("scan", {"parent_id": "sales", "filter": {"kind": ["note"]}}),
        ("scan", {"parent_id": "sales", "filter": {"kind": {"a": 1}}}),
        ("scan", {"parent_id": "sales", "filter": {"kind": None}}),
        ("scan", {"parent_id": "sales", "filter": {"type": 10**30}}),
        ("scan", {"parent_id": "sales", "filter": {"min_confidence": 10**30}}),
        ("scan", {"parent_id": "sales", "filter": {"min_confidence": float("nan")}}),
        ("scan", {"parent_id": "sales", "filter": {"tags_any": [1, 2]}}),
        ("scan", {"parent_id": "sales", "filter": {"tags_any": []}}),
        ("scan", {"parent_id": "sales", "filter": {"updated_after": 2026}}),
        ("scan", {"parent_id": "sales", "filter": {"type": ["note"]}}),
        ("scan", {"parent_id": "sales", "after": "\x00"}),
        ("pick", {"id": "sales/policy", "after": "b" + "9" * 5000}),
        ("pick", {"id": "sales/policy", "after": "b99999999999999999999999"}),
        ("pick", {"id": "sales/policy", "after": "x"}),
        ("pick", {"id": "sales/policy", "section": []}),
        ("pick", {"id": "sales/policy", "section": [""] * 11}),
        ("pick", {"id": "sales/policy", "section": ""}),
        ("pick", {"id": "sales/policy", "section": "Deadlines", "after": ""}),
        ("pick", {"id": ["sales/policy"], "after": ""}),
        ("pick", {"id": []}),
        ("pick", {"id": ["sales/policy"] * 6 + ["a", "b", "c", "d", "e"]}),
        ("look", {"id": []}),
        ("look", {"id": [f"n{i}" for i in range(11)]}),
        ("sniff", {"terms": []}),
        ("sniff", {"terms": ["ab"] * 3 + [f"t{i}x" for i in range(8)]}),
        ("sniff", {"terms": "a"}),
        ("sniff", {"terms": "  "}),
        ("sniff", {"terms": ["deadline", ""]}),
        ("sniff", {"terms": "x" * 20000}),
        ("sniff", {"terms": "\x00\x00"}),
        ("locate", {"query": ""}),
        ("locate", {"query": '" OR * NEAR( AND -'}),
        ("locate", {"query": "\x00" * 10}),
        ("move", {"id": "sales/policy", "rel": ""}),
        ("move", {"id": "sales/policy", "rel": "x" * 5000}),
        ("query", {"id": "sales/orders", "sql": "\x00"}),
        ("look", {"id": "sales/policy", "fields": []}),
        ("look", {"id": "sales/policy", "fields": ["nope"]}),
    ],
)
def test_odd_but_well_typed_values_never_crash(vine: Vine, call: str, args: dict[str, Any]) -> None:
    out = vine.call(call, args)
    assert isinstance(out, dict)
    if "error" in out:
        assert set(out) == {"error"}
        assert out["error"]["code"] in {
            "E_SCHEMA",
            "E_NOT_FOUND",
            "E_QUERY_INVALID",
            "E_QUERY_FORBIDDEN",
        }, out


ESCAPES = [
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "a/../../b",
    "C:\\x",
    "x\x00y",
    "~/x",
    "..",
    ".",
    "",
    " ",
    "\t\n",
    "_derived/catalog",
    "_derived/traces",
    ".git/config",
    "x" * 5000,
    "a/" * 2000 + "b",
    "../secret",
    "../../secret",
    "sales/../../secret",
    "..\\secret",
    "sales\\..\\..\\secret",
    "%2e%2e/secret",
    "../etc/passwd",
    "../outside/x",
    "../outside/_index",
    "../outside",
    "leak",
    "leak.md",
    "linked/x",
    "linked",
    "sales/linked/x",
    "sales/linked",
    "linked/_index",
    "//etc/passwd",
    "file:///etc/passwd",
    "\\\\server\\share\\x",
    "./sales/policy",
    "sales/./policy",
    "sales//policy/..",
    "\x7f",
    "sales/policy\x00",
    "~",
    "~root/x",
    "D:x",
    "...",
]


@pytest.fixture(scope="module")
def escapes_with_base(base: Path) -> list[str]:
    return [
        *ESCAPES,
        str(base / "secret"),
        str(base / "outside" / "x"),
        str(base / "forest" / "sales" / "policy"),
        "../" + base.name + "/secret",
    ]


def _recorded(base: Path) -> list[str]:
    forest = os.path.realpath(base / "forest")
    bad = []
    for raw in _AUDIT["paths"]:
        real = _as_path(raw)
        inside_base = real.startswith(os.path.realpath(base) + os.sep)
        inside_forest = real == forest or real.startswith(forest + os.sep)
        if (inside_base and not inside_forest) or real.startswith("/etc/"):
            bad.append(raw)
    return bad


def _escape_calls(node: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        ("look", {"id": node}),
        ("pick", {"id": node}),
        ("move", {"id": node}),
        ("move", {"id": node, "rel": "children"}),
        ("query", {"id": node, "sql": "SELECT 1"}),
        ("scan", {"parent_id": node}),
        ("scan", {"parent_id": node, "recursive": True}),
    ]
    if node != "":
        # sniff reads scope="" as "the whole forest", exactly like no scope (see below)
        out.append(("sniff", {"terms": "deadline", "scope": node}))
    return out


@pytest.mark.parametrize("index", range(len(ESCAPES) + 4))
def test_ids_that_leave_the_forest_are_not_found(
    vine: Vine, base: Path, escapes_with_base: list[str], index: int
) -> None:
    node = escapes_with_base[index]
    _AUDIT["paths"].clear()
    _AUDIT["on"] = True
    try:
        answers = [(name, args, vine.call(name, args)) for name, args in _escape_calls(node)]
        answers += [(name, args, getattr(vine, name)(**args)) for name, args in _escape_calls(node)]
    finally:
        _AUDIT["on"] = False
    for name, args, out in answers:
        assert_error(out, "E_NOT_FOUND")
        assert SENTINEL not in dumps(out), (name, args)
    assert not _recorded(base), _recorded(base)


def test_batches_put_escaping_ids_in_missing(vine: Vine, base: Path) -> None:
    ids = ["sales/policy", "../secret", "/etc/passwd", "leak", "linked/x", "..", ""]
    _AUDIT["paths"].clear()
    _AUDIT["on"] = True
    try:
        looked = assert_ok(vine.look(ids[:7]))
        picked = assert_ok(vine.pick(ids[:5]))
    finally:
        _AUDIT["on"] = False
    assert [n["id"] for n in looked["nodes"]] == ["sales/policy"]
    assert looked["missing"] == ids[1:7]
    assert [n["id"] for n in picked["nodes"]] == ["sales/policy"]
    assert picked["missing"] == ids[1:5]
    assert SENTINEL not in dumps(looked) + dumps(picked)
    assert not _recorded(base)


def test_nothing_outside_the_forest_appears_in_forest_wide_reads(vine: Vine, base: Path) -> None:
    _AUDIT["paths"].clear()
    _AUDIT["on"] = True
    try:
        answers = [
            vine.sniff([SENTINEL, "deadline"]),
            vine.sniff(SENTINEL, k=20),
            vine.locate(SENTINEL),
            vine.locate("deadline secret", k=50),
            vine.scan("_index", recursive=True, fields=["id", "title", "summary"]),
            vine.move("_index", rel="children"),
            vine.look("_index"),
            vine.look("sales/_index"),
            vine.sniff("deadline", scope="sales"),
        ]
    finally:
        _AUDIT["on"] = False
    for out in answers:
        assert_ok(out)
        assert SENTINEL not in dumps(out)
    assert not _recorded(base)


def test_sniff_empty_scope_is_the_whole_forest(vine: Vine) -> None:
    whole = assert_ok(vine.sniff("deadline"))
    empty = assert_ok(vine.sniff("deadline", scope=""))
    assert [r["id"] for r in empty["results"]] == [r["id"] for r in whole["results"]]
    assert empty["scanned_nodes"] == whole["scanned_nodes"]


def test_a_dataset_payload_outside_the_forest_is_not_found(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "forest",
        {
            "d/up": leaf(
                "# Up\n", "dataset", payload="../../outside/orders.db", payload_type="sqlite"
            ),
            "d/abs": leaf(
                "# Abs\n",
                "dataset",
                payload=str(tmp_path / "outside" / "orders.db"),
                payload_type="sqlite",
            ),
            "d/link": leaf("# Link\n", "dataset", payload="link.db", payload_type="sqlite"),
        },
    )
    (tmp_path / "outside").mkdir()
    conn = sqlite3.connect(tmp_path / "outside" / "orders.db")
    conn.execute("CREATE TABLE orders(id TEXT)")
    conn.execute("INSERT INTO orders VALUES (?)", (SENTINEL,))
    conn.commit()
    conn.close()
    os.symlink(tmp_path / "outside" / "orders.db", root / "d" / "link.db")
    with reader(root) as v:
        for node in ("d/up", "d/abs", "d/link"):
            out = v.query(node, "SELECT * FROM orders")
            assert_error(out, "E_NOT_FOUND")
            assert SENTINEL not in dumps(out)
            assert SENTINEL not in dumps(v.look(node))


_IDS = st.sampled_from(
    [
        "sales/policy",
        "sales/orders",
        "sales",
        "sales/_index",
        "_index",
        "people/ana",
        "nope",
        "../secret",
        "",
        "leak",
    ]
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    _IDS,
    st.sampled_from(
        [
            "2026",
            "2026-02",
            "9999-12-31",
            "b0",
            "b3",
            "out",
            "both",
            "children",
            "outline",
            "summary",
            "Deadlines",
        ]
    ),
)
_KEYS = st.sampled_from(
    [
        "tags_any",
        "kind",
        "type",
        "min_confidence",
        "updated_after",
        "origin_prefix",
        "nope",
        "id",
        "summary",
    ]
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=6,
)


@pytest.mark.parametrize("name", READS)
def test_fuzzed_arguments_never_crash(vine: Vine, name: str) -> None:
    params = [p.name for p in CALLS[name].params]
    strategy = st.fixed_dictionaries({}, optional={p: _VALUES for p in [*params, "bogus"]})

    @settings(
        max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def run(args: dict[str, Any]) -> None:
        out = vine.call(name, args)
        assert isinstance(out, dict)
        if "error" in out:
            assert set(out) == {"error"}
            assert out["error"]["code"] != "E_INTERNAL", (name, args, out)

    run()
