"""The argument boundary and the error envelope of the seven reads (forest-format §6.0, §8).

Every read is checked through both entry points (the Python method and
``Vine.call``), ids that try to leave the forest are answered ``E_NOT_FOUND``
without anything outside being opened, and no response here is ever ``E_INTERNAL``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monkeyllm import CALLS, Vine
from monkeyllm.budget import dumps

from .forestkit import assert_error, assert_ok, make_forest

SENTINEL = "SENTINEL-e7c41f-never-leaves"
READS = sorted(name for name, spec in CALLS.items() if spec.kind == "read")

# -- what the engine touched: an audit hook, active only while a test records -------------

_AUDIT: dict[str, Any] = {"on": False, "paths": []}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _AUDIT["on"]:
        return
    if event in ("open", "sqlite3.connect", "os.scandir", "os.listdir") and args:
        target = args[0]
        if isinstance(target, bytes):
            target = target.decode("utf-8", "replace")
        if isinstance(target, str | os.PathLike):
            _AUDIT["paths"].append(os.fspath(target))


sys.addaudithook(_audit)


def _as_path(raw: str) -> str:
    if raw.startswith("file:"):
        raw = unquote(raw[5:].split("?", 1)[0])
    return os.path.realpath(raw)


# -- the forest ------------------------------------------------------------------------------

POLICY = """# Exchange policy

## Channels

Retail exchanges happen at the counter.

## Deadlines

Retail returns close 30 days after the invoice date.
"""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the forest and, beside it, files that must never be read."""
    base = tmp_path_factory.mktemp("errors")
    make_forest(base / "forest", {
        "sales/policy": ("note", {"tags": ["sales"], "links": [
            {"rel": "related-to", "target": "people/ana"}]}, POLICY),
        "sales/orders": ("dataset", {"payload": "orders.db", "payload_type": "sqlite"},
                         "# Orders\n\n## Notes\n\nOne row per order.\n"),
        "people/ana": ("entity", {"summary": "Ana runs sales."}, "# Ana\n\nDeadline owner.\n"),
    })
    conn = sqlite3.connect(base / "forest" / "sales" / "orders.db")
    conn.execute("CREATE TABLE orders(id INTEGER, region TEXT)")
    conn.execute("INSERT INTO orders VALUES (1, 'South')")
    conn.commit()
    conn.close()
    secret = (f"---\nid: secret\ntype: note\ntitle: {SENTINEL}\nsummary: {SENTINEL}\n"
              f"created: 2026-01-01\nupdated: 2026-01-01\n---\n\n# {SENTINEL}\n\n"
              f"## Deadlines\n\n{SENTINEL} deadline\n")
    (base / "secret.md").write_text(secret)
    (base / "etc").mkdir()
    (base / "etc" / "passwd.md").write_text(secret)
    (base / "outside").mkdir()
    (base / "outside" / "_index.md").write_text(secret)
    (base / "outside" / "x.md").write_text(secret)
    leak = sqlite3.connect(base / "outside" / "orders.db")
    leak.execute("CREATE TABLE orders(id TEXT)")
    leak.execute("INSERT INTO orders VALUES (?)", (SENTINEL,))
    leak.commit()
    leak.close()
    forest = base / "forest"
    os.symlink(base / "secret.md", forest / "leak.md")
    os.symlink(base / "outside", forest / "linked", target_is_directory=True)
    os.symlink(base / "outside", forest / "sales" / "linked", target_is_directory=True)
    return base


@pytest.fixture(scope="module")
def vine(base: Path) -> Iterator[Vine]:
    with Vine(base / "forest", writable=False, alpha=0) as v:
        yield v


@pytest.fixture(autouse=True)
def never_internal(monkeypatch: pytest.MonkeyPatch) -> None:
    """No call made by a test in this file may answer ``E_INTERNAL``: fail on the spot."""
    original = Vine._run

    def run(self: Vine, spec: Any, args: dict[str, Any]) -> dict[str, Any]:
        out = original(self, spec, args)
        if isinstance(out.get("error"), dict) and out["error"].get("code") == "E_INTERNAL":
            shown = {k: (repr(v)[:80]) for k, v in args.items()}
            raise AssertionError(f"E_INTERNAL from {spec.name}({shown}): {out['error']}")
        return out

    monkeypatch.setattr(Vine, "_run", run)


VALID: dict[str, dict[str, Any]] = {
    "locate": {"query": "exchange policy"},
    "look": {"id": "sales/policy"},
    "move": {"id": "sales/policy"},
    "pick": {"id": "sales/policy"},
    "scan": {"parent_id": "sales"},
    "sniff": {"terms": "deadline"},
    "query": {"id": "sales/orders", "sql": "SELECT COUNT(*) FROM orders"},
    "calendar": {}, "coverage": {},
}


def valid_args(name: str) -> dict[str, Any]:
    """Well-typed arguments for a read (a generic guess for reads added later)."""
    if name in VALID:
        return dict(VALID[name])
    out = {}
    for p in CALLS[name].params:
        if p.required:
            out[p.name] = "x" if accepts(p.hint, "x") else ["x"]
    return out


def test_every_read_is_covered() -> None:
    assert {"locate", "look", "move", "pick", "scan", "sniff", "query"} <= set(READS)


# -- an independent oracle for the signature types -------------------------------------------


def accepts(hint: Any, value: Any) -> bool:
    """Does ``value`` satisfy the type hint (no coercion; a bool is not an int)?"""
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(accepts(option, value) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is Literal:
        return isinstance(value, str) and value in typing.get_args(hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(accepts(item, v) for v in value)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if typing.is_typeddict(hint):   # a closed object: only the keys it names
        return isinstance(value, dict) and set(value) <= set(typing.get_type_hints(hint))
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    raise AssertionError(f"no oracle for {hint!r}")


CANDIDATES: dict[str, Any] = {
    "bool": True, "int": 3, "float": 2.5, "str": "zz-not-a-choice", "list_str": ["x"],
    "list_int": [3], "list_null": [None], "list_dict": [{}], "dict": {"a": 1},
}


def _bad_cases() -> list[tuple[str, str, str, Any]]:
    out = []
    for name in READS:
        for p in CALLS[name].params:
            for label, value in CANDIDATES.items():
                if not accepts(p.hint, value):
                    out.append((name, p.name, label, value))
    return out


BAD = _bad_cases()


def test_the_bad_type_matrix_covers_the_brief() -> None:
    labels = {(name, param, label) for name, param, label, _ in BAD}
    assert ("locate", "k", "bool") in labels              # bool where int is expected
    assert ("scan", "limit", "bool") in labels
    assert ("locate", "query", "list_str") in labels      # list where a string is expected
    assert ("move", "id", "list_str") in labels
    assert ("locate", "query", "int") in labels           # number for a string
    assert ("sniff", "scope", "float") in labels
    assert ("locate", "include", "dict") in labels        # dict for a list
    assert ("look", "fields", "dict") in labels
    assert len(BAD) > 150


def _schema_names(out: dict[str, Any], param: str) -> None:
    err = assert_error(out, "E_SCHEMA")
    assert param in err["message"], err


@pytest.mark.parametrize("name, param, label, value", BAD,
                         ids=[f"{n}-{p}-{lab}" for n, p, lab, _ in BAD])
def test_wrong_type_is_e_schema_through_call(vine: Vine, name: str, param: str, label: str,
                                             value: Any) -> None:
    args = valid_args(name)
    args[param] = value
    _schema_names(vine.call(name, args), param)


@pytest.mark.parametrize("name, param, label, value", BAD,
                         ids=[f"{n}-{p}-{lab}" for n, p, lab, _ in BAD])
def test_wrong_type_is_e_schema_through_the_method(vine: Vine, name: str, param: str,
                                                   label: str, value: Any) -> None:
    args = valid_args(name)
    args[param] = value
    _schema_names(getattr(vine, name)(**args), param)


@pytest.mark.parametrize("name", READS)
def test_valid_arguments_answer(vine: Vine, name: str) -> None:
    if name in VALID:
        assert_ok(vine.call(name, valid_args(name)))
        assert_ok(getattr(vine, name)(**valid_args(name)))


@pytest.mark.parametrize("name", READS)
def test_unknown_parameter(vine: Vine, name: str) -> None:
    args = {**valid_args(name), "bogus_param": 1}
    err = assert_error(vine.call(name, args), "E_SCHEMA")
    assert "bogus_param" in err["message"]
    err = assert_error(getattr(vine, name)(**args), "E_SCHEMA")
    assert "bogus_param" in err["message"]


REQUIRED = [(n, p.name) for n in READS for p in CALLS[n].params if p.required]
OPTIONAL = [(n, p.name) for n in READS for p in CALLS[n].params if not p.required]


@pytest.mark.parametrize("name, param", REQUIRED)
def test_missing_required_parameter(vine: Vine, name: str, param: str) -> None:
    args = valid_args(name)
    del args[param]
    _schema_names(vine.call(name, args), param)
    _schema_names(getattr(vine, name)(**args), param)


@pytest.mark.parametrize("name, param", REQUIRED)
def test_none_for_a_required_parameter_is_missing(vine: Vine, name: str, param: str) -> None:
    args = {**valid_args(name), param: None}
    _schema_names(vine.call(name, args), param)
    _schema_names(getattr(vine, name)(**args), param)


@pytest.mark.parametrize("name, param", OPTIONAL)
def test_none_means_absent(vine: Vine, name: str, param: str) -> None:
    if name not in VALID:
        pytest.skip("no known-good arguments for this read")
    assert_ok(vine.call(name, {**valid_args(name), param: None}))
    assert_ok(getattr(vine, name)(**{**valid_args(name), param: None}))


def test_the_brief_examples(vine: Vine) -> None:
    _schema_names(vine.locate(k="3", query="x"), "k")
    _schema_names(vine.locate("x", k=True), "k")
    _schema_names(vine.scan("sales", limit=False), "limit")
    _schema_names(vine.scan("sales", recursive=1), "recursive")
    _schema_names(vine.move(["sales/policy"]), "id")
    _schema_names(vine.query("sales/orders", 42), "sql")
    _schema_names(vine.look("sales/policy", fields={"summary": True}), "fields")
    _schema_names(vine.sniff(False), "terms")
    _schema_names(vine.pick("sales/policy", section={}), "section")
    _schema_names(vine.scan("sales", filter=["type"]), "filter")
    _schema_names(vine.locate("x", type_filter=3), "type_filter")
    _schema_names(vine.look([{}]), "id")
    _schema_names(vine.sniff([None]), "terms")


def test_positional_misuse(vine: Vine) -> None:
    assert_error(vine.move("sales/policy", None, "out", "extra"), "E_SCHEMA")
    assert_error(vine.look(), "E_SCHEMA")  # type: ignore[call-arg]
    _schema_names(vine.query("sales/orders"), "sql")  # type: ignore[call-arg]
    _schema_names(vine.locate("x", "3"), "k")
    err = assert_error(vine.look("sales/policy", id="sales/policy"), "E_SCHEMA")
    assert "id" in err["message"]


@pytest.mark.parametrize("name", ["nope", "LOOK", "plant_everything", "", " look"])
def test_unknown_call(vine: Vine, name: str) -> None:
    err = assert_error(vine.call(name, {}), "E_SCHEMA")
    assert "look" in err.get("hint", "")


@pytest.mark.parametrize("name", [None, 3, ["look"], {"look": 1}])
def test_call_name_that_is_not_a_string(vine: Vine, name: Any) -> None:
    assert_error(vine.call(name, {}), "E_SCHEMA")


@pytest.mark.parametrize("name", READS)
@pytest.mark.parametrize("args", [["id", "x"], "id=x", 3, ("id", "x"), True],
                         ids=["list", "str", "int", "tuple", "bool"])
def test_arguments_that_are_not_an_object(vine: Vine, name: str, args: Any) -> None:
    err = assert_error(vine.call(name, args), "E_SCHEMA")
    assert "object" in err["message"]


def test_null_arguments_mean_no_arguments(vine: Vine) -> None:
    _schema_names(vine.call("look", None), "id")
    _schema_names(vine.call("look", {}), "id")


# -- enums and windows ---------------------------------------------------------------------


@pytest.mark.parametrize("call, args, param", [
    ("locate", {"query": "x", "scope": "everything"}, "scope"),
    ("locate", {"query": "x", "scope": "Branches"}, "scope"),
    ("locate", {"query": "x", "scope": ""}, "scope"),
    ("locate", {"query": "x", "scope": "leaves"}, "scope"),
    ("move", {"id": "sales/policy", "direction": "up"}, "direction"),
    ("move", {"id": "sales/policy", "direction": "BOTH"}, "direction"),
    ("move", {"id": "sales/policy", "direction": "all"}, "direction"),
    ("move", {"id": "sales/policy", "direction": ""}, "direction"),
    ("locate", {"query": "x", "date_field": "modified"}, "date_field"),
    ("scan", {"parent_id": "sales", "date_field": "mtime"}, "date_field"),
    ("sniff", {"terms": "xx", "date_field": "Created"}, "date_field"),
    ("locate", {"query": "x", "include": ["body"]}, "include"),
    ("locate", {"query": "x", "include": ["outline", "summary"]}, "include"),
    ("scan", {"parent_id": "sales", "fields": ["payload"]}, "payload"),
    ("scan", {"parent_id": "sales", "fields": ["id", "nope"]}, "nope"),
    ("scan", {"parent_id": "sales", "filter": {"nope": 1}}, "nope"),
    ("scan", {"parent_id": "sales", "filter": {"kind": "leaf"}}, "kind"),
])
def test_enum_values_are_refused(vine: Vine, call: str, args: dict[str, Any],
                                 param: str) -> None:
    err = assert_error(vine.call(call, args), "E_SCHEMA")
    assert param in err["message"] + err.get("hint", "")


def test_the_deprecated_scope_alias_is_accepted(vine: Vine) -> None:
    assert_ok(vine.locate("policy", scope="bananas"))
    assert_ok(vine.locate("policy", scope="notes"))


WINDOWED = [n for n in ("locate", "scan", "sniff") if n in READS]
MALFORMED = ["yesterday", "2026-13", "2026-02-30", "26", "2026/01/01", "2026-1", "2026-01-1",
             "2026-01-01T00:00", "2026-00", "20260101", "-2026", "2026-01-01 extra", "0000"]


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize("bound", ["since", "until"])
@pytest.mark.parametrize("value", MALFORMED)
def test_malformed_window_bound(vine: Vine, name: str, bound: str, value: str) -> None:
    err = assert_error(vine.call(name, {**valid_args(name), bound: value}), "E_SCHEMA")
    assert bound in err["message"]


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize("since, until", [("2026-05", "2026-04"), ("2027", "2026-12-31"),
                                          ("2026-03-02", "2026-03-01")])
def test_since_after_until_is_an_empty_window(vine: Vine, name: str, since: str,
                                              until: str) -> None:
    """A window no day falls in matches nothing, and says so (the schema cannot
    compare two values, so the call does not refuse what the schema allows)."""
    args = {**valid_args(name), "since": since, "until": until}
    out = assert_ok(vine.call(name, args))
    assert out["window"] == {"since": since, "until": until, "date_field": "created",
                             "empty": True}
    assert out.get("results", out.get("nodes")) == []


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize("since, until", [("2026", "2026"), ("2026-01", None),
                                          (None, "2026-01-10"), ("0001", "9998")])
def test_good_windows_answer_and_echo(vine: Vine, name: str, since: str | None,
                                      until: str | None) -> None:
    out = assert_ok(vine.call(name, {**valid_args(name), "since": since, "until": until}))
    assert out["window"] == {"since": since, "until": until, "date_field": "created"}


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize("until", ["9999", "9999-12", "9999-12-31"])
def test_the_last_representable_day_is_a_valid_bound(vine: Vine, name: str, until: str) -> None:
    out = vine.call(name, {**valid_args(name), "until": until})
    if "error" in out:
        assert_error(out, "E_SCHEMA")


# -- values that are well-typed but out of range ---------------------------------------------


@pytest.mark.parametrize("call, args", [
    ("locate", {"query": "policy", "k": 2 ** 63}),
    ("locate", {"query": "policy", "k": 10 ** 30}),
    ("locate", {"query": "policy", "k": -(2 ** 63)}),
    ("locate", {"query": "policy", "k": 0}),
    ("sniff", {"terms": "deadline", "k": 10 ** 30}),
    ("sniff", {"terms": "deadline", "k": -5}),
    ("scan", {"parent_id": "sales", "limit": 10 ** 30}),
    ("scan", {"parent_id": "sales", "limit": -1}),
    ("scan", {"parent_id": "sales", "filter": {"kind": ["note"]}}),
    ("scan", {"parent_id": "sales", "filter": {"kind": {"a": 1}}}),
    ("scan", {"parent_id": "sales", "filter": {"kind": None}}),
    ("scan", {"parent_id": "sales", "filter": {"type": 10 ** 30}}),
    ("scan", {"parent_id": "sales", "filter": {"min_confidence": 10 ** 30}}),
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
    ("locate", {"query": "\" OR * NEAR( AND -"}),
    ("locate", {"query": "\x00" * 10}),
    ("move", {"id": "sales/policy", "rel": ""}),
    ("move", {"id": "sales/policy", "rel": "x" * 5000}),
    ("query", {"id": "sales/orders", "sql": "\x00"}),
    ("look", {"id": "sales/policy", "fields": []}),
    ("look", {"id": "sales/policy", "fields": ["nope"]}),
])
def test_odd_but_well_typed_values_never_crash(vine: Vine, call: str,
                                               args: dict[str, Any]) -> None:
    out = vine.call(call, args)
    assert isinstance(out, dict)
    if "error" in out:
        assert set(out) == {"error"}
        assert out["error"]["code"] in {"E_SCHEMA", "E_NOT_FOUND", "E_QUERY_INVALID",
                                        "E_QUERY_FORBIDDEN"}, out


# -- ids that try to leave the forest -----------------------------------------------------------

ESCAPES = ["../x", "../../etc/passwd", "/etc/passwd", "a/../../b", "C:\\x", "x\x00y", "~/x",
           "..", ".", "", " ", "\t\n", "_derived/catalog", "_derived/traces", ".git/config",
           "x" * 5000, "a/" * 2000 + "b", "../secret", "../../secret", "sales/../../secret",
           "..\\secret", "sales\\..\\..\\secret", "%2e%2e/secret", "../etc/passwd",
           "../outside/x", "../outside/_index", "../outside", "leak", "leak.md", "linked/x",
           "linked", "sales/linked/x", "sales/linked", "linked/_index", "//etc/passwd",
           "file:///etc/passwd", "\\\\server\\share\\x", "./sales/policy", "sales/./policy",
           "sales//policy/..", "\x7f", "sales/policy\x00", "~", "~root/x", "D:x", "..."]


@pytest.fixture(scope="module")
def escapes_with_base(base: Path) -> list[str]:
    return [*ESCAPES, str(base / "secret"), str(base / "outside" / "x"),
            str(base / "forest" / "sales" / "policy"), "../" + base.name + "/secret"]


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
        ("look", {"id": node}), ("pick", {"id": node}), ("move", {"id": node}),
        ("move", {"id": node, "rel": "children"}), ("query", {"id": node, "sql": "SELECT 1"}),
        ("scan", {"parent_id": node}), ("scan", {"parent_id": node, "recursive": True}),
    ]
    if node != "":
        # sniff reads scope="" as "the whole forest", exactly like no scope (see below)
        out.append(("sniff", {"terms": "deadline", "scope": node}))
    return out


@pytest.mark.parametrize("index", range(len(ESCAPES) + 4))
def test_ids_that_leave_the_forest_are_not_found(vine: Vine, base: Path,
                                                 escapes_with_base: list[str],
                                                 index: int) -> None:
    node = escapes_with_base[index]
    _AUDIT["paths"].clear()
    _AUDIT["on"] = True
    try:
        answers = [(name, args, vine.call(name, args)) for name, args in _escape_calls(node)]
        answers += [(name, args, getattr(vine, name)(**args))
                    for name, args in _escape_calls(node)]
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
        answers = [vine.sniff([SENTINEL, "deadline"]), vine.sniff(SENTINEL, k=20),
                   vine.locate(SENTINEL), vine.locate("deadline secret", k=50),
                   vine.scan("_index", recursive=True, fields=["id", "title", "summary"]),
                   vine.move("_index", rel="children"), vine.look("_index"),
                   vine.look("sales/_index"), vine.sniff("deadline", scope="sales")]
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
    root = make_forest(tmp_path / "forest", {
        "d/up": ("dataset", {"payload": "../../outside/orders.db", "payload_type": "sqlite"},
                 "# Up\n"),
        "d/abs": ("dataset", {"payload": str(tmp_path / "outside" / "orders.db"),
                              "payload_type": "sqlite"}, "# Abs\n"),
        "d/link": ("dataset", {"payload": "link.db", "payload_type": "sqlite"}, "# Link\n"),
    })
    (tmp_path / "outside").mkdir()
    conn = sqlite3.connect(tmp_path / "outside" / "orders.db")
    conn.execute("CREATE TABLE orders(id TEXT)")
    conn.execute("INSERT INTO orders VALUES (?)", (SENTINEL,))
    conn.commit()
    conn.close()
    os.symlink(tmp_path / "outside" / "orders.db", root / "d" / "link.db")
    with Vine(root, writable=False, alpha=0) as v:
        for node in ("d/up", "d/abs", "d/link"):
            out = v.query(node, "SELECT * FROM orders")
            assert_error(out, "E_NOT_FOUND")
            assert SENTINEL not in dumps(out)
            assert SENTINEL not in dumps(v.look(node))


# -- fuzz: any argument object is an answer or a typed error, never E_INTERNAL -----------------

_IDS = st.sampled_from(["sales/policy", "sales/orders", "sales", "sales/_index", "_index",
                        "people/ana", "nope", "../secret", "", "leak"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 70), 2 ** 70),
                     st.floats(allow_nan=True), st.text(max_size=12), _IDS,
                     st.sampled_from(["2026", "2026-02", "9999-12-31", "b0", "b3", "out",
                                      "both", "children", "outline", "summary", "Deadlines"]))
_KEYS = st.sampled_from(["tags_any", "kind", "type", "min_confidence", "updated_after",
                         "origin_prefix", "nope", "id", "summary"])
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=6)


@pytest.mark.parametrize("name", READS)
def test_fuzzed_arguments_never_crash(vine: Vine, name: str) -> None:
    params = [p.name for p in CALLS[name].params]
    strategy = st.fixed_dictionaries(
        {}, optional={p: _VALUES for p in [*params, "bogus"]})

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(args: dict[str, Any]) -> None:
        out = vine.call(name, args)
        assert isinstance(out, dict)
        if "error" in out:
            assert set(out) == {"error"}
            assert out["error"]["code"] != "E_INTERNAL", (name, args, out)

    run()
