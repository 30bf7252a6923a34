"""The argument boundary and the error envelope of the seven reads (forest-format §6.0, §8).

Every read is checked through both entry points (the Python method and
``Vine.call``), ids that try to leave the forest are answered ``E_NOT_FOUND``
without anything outside being opened, and no response here is ever ``E_INTERNAL``.
"""

from __future__ import annotations

import os
import sys
import types
import typing
from typing import Any, Literal

import pytest

from monkeyllm import CALLS, Vine

from ..forestkit import assert_error, assert_ok
from .kit import _AUDIT, READS

# -- what the engine touched: an audit hook, active only while a test records -------------


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


# -- the forest ------------------------------------------------------------------------------


VALID: dict[str, dict[str, Any]] = {
    "locate": {"query": "exchange policy"},
    "look": {"id": "sales/policy"},
    "move": {"id": "sales/policy"},
    "pick": {"id": "sales/policy"},
    "scan": {"parent_id": "sales"},
    "sniff": {"terms": "deadline"},
    "query": {"id": "sales/orders", "sql": "SELECT COUNT(*) FROM orders"},
    "calendar": {},
    "coverage": {},
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
    if typing.is_typeddict(hint):  # a closed object: only the keys it names
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
    "bool": True,
    "int": 3,
    "float": 2.5,
    "str": "zz-not-a-choice",
    "list_str": ["x"],
    "list_int": [3],
    "list_null": [None],
    "list_dict": [{}],
    "dict": {"a": 1},
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
    assert ("locate", "k", "bool") in labels  # bool where int is expected
    assert ("scan", "limit", "bool") in labels
    assert ("locate", "query", "list_str") in labels  # list where a string is expected
    assert ("move", "id", "list_str") in labels
    assert ("locate", "query", "int") in labels  # number for a string
    assert ("sniff", "scope", "float") in labels
    assert ("locate", "include", "dict") in labels  # dict for a list
    assert ("look", "fields", "dict") in labels
    assert len(BAD) > 150


def _schema_names(out: dict[str, Any], param: str) -> None:
    err = assert_error(out, "E_SCHEMA")
    assert param in err["message"], err


@pytest.mark.parametrize("through", ["call", "the_method"])
@pytest.mark.parametrize(
    "name, param, label, value", BAD, ids=[f"{n}-{p}-{lab}" for n, p, lab, _ in BAD]
)
def test_wrong_type_is_e_schema(
    vine: Vine, name: str, param: str, label: str, value: Any, through: str
) -> None:
    """Through ``Vine.call`` and through the method of the same name."""
    args = valid_args(name)
    args[param] = value
    out = vine.call(name, args) if through == "call" else getattr(vine, name)(**args)
    _schema_names(out, param)


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


@pytest.mark.parametrize(
    ("call", "args", "said"),
    [
        ("locate", {"query": "x", "include": ["outline", "bogus"]}, "item 1 must be one of"),
        ("look", {"id": ["sales/policy", 7]}, "item 1 must be a string, got integer 7"),
        ("scan", {"parent_id": "sales", "fields": ["id", "nope"]}, "got string 'nope'"),
        ("sniff", {"terms": ["abc", ["b"]]}, "got list ['b']"),
    ],
)
def test_a_wrong_list_item_is_shown_itself(
    vine: Vine, call: str, args: dict[str, Any], said: str
) -> None:
    """The message names the item that is wrong and shows it, not the whole list."""
    message = assert_error(vine.call(call, args), "E_SCHEMA")["message"]
    assert said in message
    whole = next(v for v in args.values() if isinstance(v, list))
    assert repr(whole) not in message


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
@pytest.mark.parametrize(
    "args", [["id", "x"], "id=x", 3, ("id", "x"), True], ids=["list", "str", "int", "tuple", "bool"]
)
def test_arguments_that_are_not_an_object(vine: Vine, name: str, args: Any) -> None:
    err = assert_error(vine.call(name, args), "E_SCHEMA")
    assert "object" in err["message"]


def test_null_arguments_mean_no_arguments(vine: Vine) -> None:
    _schema_names(vine.call("look", None), "id")
    _schema_names(vine.call("look", {}), "id")


# -- enums and windows ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, args, param",
    [
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
    ],
)
def test_enum_values_are_refused(vine: Vine, call: str, args: dict[str, Any], param: str) -> None:
    err = assert_error(vine.call(call, args), "E_SCHEMA")
    assert param in err["message"] + err.get("hint", "")


def test_the_deprecated_scope_alias_is_accepted(vine: Vine) -> None:
    assert_ok(vine.locate("policy", scope="bananas"))
    assert_ok(vine.locate("policy", scope="notes"))


WINDOWED = [n for n in ("locate", "scan", "sniff") if n in READS]
MALFORMED = [
    "yesterday",
    "2026-13",
    "2026-02-30",
    "26",
    "2026/01/01",
    "2026-1",
    "2026-01-1",
    "2026-01-01T00:00",
    "2026-00",
    "20260101",
    "-2026",
    "2026-01-01 extra",
    "0000",
]


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize("bound", ["since", "until"])
@pytest.mark.parametrize("value", MALFORMED)
def test_malformed_window_bound(vine: Vine, name: str, bound: str, value: str) -> None:
    err = assert_error(vine.call(name, {**valid_args(name), bound: value}), "E_SCHEMA")
    assert bound in err["message"]


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize(
    "since, until", [("2026-05", "2026-04"), ("2027", "2026-12-31"), ("2026-03-02", "2026-03-01")]
)
def test_since_after_until_is_an_empty_window(
    vine: Vine, name: str, since: str, until: str
) -> None:
    """A window no day falls in matches nothing, and says so (the schema cannot
    compare two values, so the call does not refuse what the schema allows)."""
    args = {**valid_args(name), "since": since, "until": until}
    out = assert_ok(vine.call(name, args))
    assert out["window"] == {"since": since, "until": until, "date_field": "created", "empty": True}
    assert out.get("results", out.get("nodes")) == []


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize(
    "since, until", [("2026", "2026"), ("2026-01", None), (None, "2026-01-10"), ("0001", "9998")]
)
def test_good_windows_answer_and_echo(
    vine: Vine, name: str, since: str | None, until: str | None
) -> None:
    out = assert_ok(vine.call(name, {**valid_args(name), "since": since, "until": until}))
    assert out["window"] == {"since": since, "until": until, "date_field": "created"}


@pytest.mark.parametrize("name", WINDOWED)
@pytest.mark.parametrize("until", ["9999", "9999-12", "9999-12-31"])
def test_the_last_representable_day_is_a_valid_bound(vine: Vine, name: str, until: str) -> None:
    out = vine.call(name, {**valid_args(name), "until": until})
    if "error" in out:
        assert_error(out, "E_SCHEMA")
