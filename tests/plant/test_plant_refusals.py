"""plant's refusals, every one an envelope that writes nothing, and its dry runs, which
check everything and write nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from ..cli.kit import vine
from ..forestkit import (
    PROSPECTING,
    TEXT_TABLE,
    assert_error,
    assert_ok,
    copy_sample,
    files_of,
    git,
    head,
    node,
    status,
)
from .kit import CLIENTS, EM, section_lines, split


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vine]:
    """One forest for the refusals: none of them may change it."""
    with Vine.init(tmp_path_factory.mktemp("refusals") / "f", "Title") as v:
        assert_ok(v.plant(dict(CLIENTS)))
        yield v


NOTE = node("clients/x", "clients/_index", "X", "About x.")


DATASET = node("clients/d", "clients/_index", "D", "About d.", type="dataset", schema=TEXT_TABLE)


def _without(spec: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != key}


REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("rows-without-schema", {**NOTE, "rows": {"t": [["a"]]}}, "E_SCHEMA"),
    (
        "dataset-rows-without-schema",
        {**_without(DATASET, "schema"), "rows": {"t": [["a"]]}},
        "E_SCHEMA",
    ),
    ("schema-on-note", {**NOTE, "schema": TEXT_TABLE}, "E_SCHEMA"),
    ("table-uppercase", {**DATASET, "schema": {"T": {"columns": {"a": "TEXT"}}}}, "E_SCHEMA"),
    ("table-dash", {**DATASET, "schema": {"my-t": {"columns": {"a": "TEXT"}}}}, "E_SCHEMA"),
    ("table-65-chars", {**DATASET, "schema": {"t" * 65: {"columns": {"a": "TEXT"}}}}, "E_SCHEMA"),
    ("column-digit-first", {**DATASET, "schema": {"t": {"columns": {"1a": "TEXT"}}}}, "E_SCHEMA"),
    ("column-quote", {**DATASET, "schema": {"t": {"columns": {'a"b': "TEXT"}}}}, "E_SCHEMA"),
    ("column-65-chars", {**DATASET, "schema": {"t": {"columns": {"c" * 65: "TEXT"}}}}, "E_SCHEMA"),
    ("type-varchar", {**DATASET, "schema": {"t": {"columns": {"a": "VARCHAR"}}}}, "E_SCHEMA"),
    ("type-injection", {**DATASET, "schema": {"t": {"columns": {"a": "TEXT); DROP"}}}}, "E_SCHEMA"),
    ("type-not-string", {**DATASET, "schema": {"t": {"columns": {"a": 1}}}}, "E_SCHEMA"),
    (
        "primary-key-undeclared",
        {**DATASET, "schema": {"t": {"columns": {"a": "TEXT"}, "primary_key": ["b"]}}},
        "E_SCHEMA",
    ),
    (
        "eleven-tables",
        {**DATASET, "schema": {f"t{i}": {"columns": {"a": "TEXT"}} for i in range(11)}},
        "E_SCHEMA",
    ),
    (
        "fifty-one-columns",
        {**DATASET, "schema": {"t": {"columns": {f"c{i}": "TEXT" for i in range(51)}}}},
        "E_SCHEMA",
    ),
    ("zero-columns", {**DATASET, "schema": {"t": {"columns": {}}}}, "E_SCHEMA"),
    ("zero-tables", {**DATASET, "schema": {}}, "E_SCHEMA"),
    ("row-too-wide", {**DATASET, "rows": {"t": [["a", "b"]]}}, "E_SCHEMA"),
    (
        "row-too-short",
        {
            **DATASET,
            "schema": {"t": {"columns": {"a": "TEXT", "b": "TEXT"}}},
            "rows": {"t": [["a", "b"], ["a"]]},
        },
        "E_SCHEMA",
    ),
    ("rows-undeclared-table", {**DATASET, "rows": {"u": [["a"]]}}, "E_SCHEMA"),
    ("payload-not-db", {**DATASET, "payload": "d.csv"}, "E_SCHEMA"),
    ("payload-in-folder", {**DATASET, "payload": "sub/d.db"}, "E_SCHEMA"),
    ("payload-type-of-dataset", {**DATASET, "payload_type": "pdf"}, "E_SCHEMA"),
    ("unknown-type", {**NOTE, "type": "widget"}, "E_SCHEMA"),
    ("unknown-rel", {**NOTE, "links": [{"rel": "likes", "target": "clients/_index"}]}, "E_SCHEMA"),
    (
        "fifty-one-links",
        {**NOTE, "links": [{"rel": "related-to", "target": f"t{i}"} for i in range(51)]},
        "E_SCHEMA",
    ),
    ("entity-without-kind", {**NOTE, "type": "entity"}, "E_FRONTMATTER"),
    ("entity-bad-kind", {**NOTE, "type": "entity", "entity_kind": "robot"}, "E_FRONTMATTER"),
    ("bad-source", {**NOTE, "source": "robot"}, "E_FRONTMATTER"),
    ("bad-payload-type", {**NOTE, "payload_type": "exe"}, "E_FRONTMATTER"),
    ("empty-summary", {**NOTE, "summary": ""}, "E_FRONTMATTER"),
    ("blank-summary", {**NOTE, "summary": "   "}, "E_FRONTMATTER"),
    ("missing-summary", _without(NOTE, "summary"), "E_FRONTMATTER"),
    ("summary-61-tokens", {**NOTE, "summary": "s" * 241}, "E_FRONTMATTER"),
    (
        "summary-this-document-describes",
        {**NOTE, "summary": "This document describes the clients."},
        "E_FRONTMATTER",
    ),
    (
        "summary-file-containing",
        {**NOTE, "summary": "file containing the clients."},
        "E_FRONTMATTER",
    ),
    ("missing-title", _without(NOTE, "title"), "E_FRONTMATTER"),
    ("empty-title", {**NOTE, "title": ""}, "E_FRONTMATTER"),
    ("confidence-over-one", {**NOTE, "confidence": 1.5}, "E_FRONTMATTER"),
    ("bad-origin", {**NOTE, "origin": "has space"}, "E_SCHEMA"),
    ("moved-from", {**NOTE, "moved_from": ["clients/old"]}, "E_SCHEMA"),
    (
        "missing-parent-branch",
        {**NOTE, "id": "nowhere/x", "parent": "nowhere/_index"},
        "E_NOT_FOUND",
    ),
    ("parent-not-the-ids-parent", {**NOTE, "parent": "_index"}, "E_SCHEMA"),
    ("parent-missing", _without(NOTE, "parent"), "E_SCHEMA"),
    ("leaf-named-index", {**NOTE, "id": "clients/sub/_index"}, "E_SCHEMA"),
    ("id-dotdot", {**NOTE, "id": "../x", "parent": "_index"}, "E_SCHEMA"),
    ("id-space-upper", {**NOTE, "id": "A B", "parent": "_index"}, "E_SCHEMA"),
    ("id-inner-dotdot", {**NOTE, "id": "clients/../y"}, "E_SCHEMA"),
    ("id-uppercase", {**NOTE, "id": "clients/Upper"}, "E_SCHEMA"),
    ("id-backslash", {**NOTE, "id": "clients\\x"}, "E_SCHEMA"),
    ("id-private-folder", {**NOTE, "id": "_derived/x", "parent": "_derived/_index"}, "E_SCHEMA"),
    ("id-segment-too-long", {**NOTE, "id": "clients/" + "a" * 300}, "E_SCHEMA"),
    ("id-too-long", {**NOTE, "id": "clients/" + "/".join(["a" * 9] * 120)}, "E_SCHEMA"),
]


@pytest.mark.parametrize(
    "spec, code", [(s, c) for _, s, c in REFUSALS], ids=[name for name, _, _ in REFUSALS]
)
def test_refusal_leaves_forest_untouched(shared: Vine, spec: dict[str, Any], code: str) -> None:
    clients = shared
    root = clients.root
    before, files = head(root), files_of(root)
    assert_error(clients.plant(spec), code)
    assert status(root) == ""
    assert head(root) == before
    assert files_of(root) == files
    assert not (root / "_derived" / "journal.json").exists()
    # The refusal is repeatable: nothing half-planted is left to collide with.
    assert_error(clients.plant(spec), code)


@pytest.mark.parametrize("node_id", ["", "   "])
def test_empty_id_is_refused(shared: Vine, node_id: str) -> None:
    clients = shared
    before, files = head(clients.root), files_of(clients.root)
    err = clients.plant({**NOTE, "id": node_id})["error"]
    assert err["code"] in ("E_SCHEMA", "E_FRONTMATTER")
    assert head(clients.root) == before and files_of(clients.root) == files
    assert status(clients.root) == ""


def test_summary_of_exactly_60_tokens_is_accepted(clients: Vine) -> None:
    assert_ok(clients.plant({**NOTE, "summary": "s" * 240}))


def test_existing_payload_is_never_overwritten(clients: Vine) -> None:
    root = clients.root
    db = root / "clients" / "d.db"
    db.write_bytes(b"an operator's file, not sqlite")
    before, files = head(root), files_of(root)
    err = assert_error(clients.plant(dict(DATASET)), "E_SCHEMA")
    assert "exists" in err["message"]
    assert db.read_bytes() == b"an operator's file, not sqlite"
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert_error(clients.look("clients/d"), "E_NOT_FOUND")


def test_existing_id_and_if_absent(clients: Vine) -> None:
    root = clients.root
    first = assert_ok(clients.plant(dict(NOTE)))
    before, files = head(root), files_of(root)
    assert first["commit"] == before
    assert_error(clients.plant({**NOTE, "summary": "Another x."}), "E_SCHEMA")
    again = assert_ok(clients.plant({**NOTE, "summary": "Another x."}, if_absent=True))
    assert again == {"id": "clients/x", "created": False, "trail": ["_index", "clients/_index"]}
    # A branch planted twice, under either spelling of its id.
    assert assert_ok(clients.plant(dict(CLIENTS), if_absent=True))["created"] is False
    assert_error(clients.plant({**CLIENTS, "id": "clients"}), "E_SCHEMA")
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert split(root / "clients" / "x.md")[0]["summary"] == "About x."
    _, body = split(root / "clients" / "_index.md")
    assert section_lines(body, "Direct bananas") == [f"- [[clients/x]] {EM} About x."]


def test_existing_dataset_if_absent_keeps_its_payload(clients: Vine) -> None:
    assert_ok(clients.plant(dict(PROSPECTING)))
    db = clients.root / "clients" / "prospecting-2026.db"
    data = db.read_bytes()
    out = assert_ok(clients.plant(dict(PROSPECTING), if_absent=True))
    assert out["created"] is False
    assert db.read_bytes() == data


@pytest.mark.parametrize(
    "spec",
    [NOTE, DATASET, PROSPECTING, {**CLIENTS, "id": "clients/sub", "parent": "clients"}],
    ids=["note", "dataset", "seed-dataset", "branch"],
)
def test_dry_run_writes_nothing(clients: Vine, spec: dict[str, Any]) -> None:
    root = clients.root
    before, files = head(root), files_of(root)
    out = assert_ok(clients.plant(dict(spec), dry_run=True))
    assert out["valid"] is True and out["dry_run"] is True and "created" not in out
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert_error(clients.look(out["id"]), "E_NOT_FOUND")
    # ... and the real plant still works afterwards.
    assert assert_ok(clients.plant(dict(spec)))["created"] is True


def test_dry_run_of_an_invalid_node_answers_its_errors(clients: Vine) -> None:
    """§6.8: a dry run collects every problem into ``errors`` inside the envelope."""
    before, files = head(clients.root), files_of(clients.root)
    out = clients.plant({**NOTE, "type": "widget", "summary": ""}, dry_run=True)
    err = assert_error(out, "E_SCHEMA")
    assert head(clients.root) == before and files_of(clients.root) == files
    assert isinstance(err.get("errors"), list) and len(err["errors"]) >= 2
    assert {e["code"] for e in err["errors"]} >= {"E_SCHEMA", "E_FRONTMATTER"}


@pytest.mark.parametrize(
    "title",
    ["Line one\nLine two", "Tab\there", "Carriage\rreturn"],
    ids=["newline", "tab", "carriage-return"],
)
def test_a_title_never_breaks_the_commit_subject(clients: Vine, title: str) -> None:
    """§9: the subject is one line, `plant(<id>): <title> [source=<s>]`. A title with a
    line break must be refused, or flattened; never split into a commit body."""
    before = head(clients.root)
    out = clients.plant({**NOTE, "title": title})
    if "error" in out:
        assert out["error"]["code"] in ("E_FRONTMATTER", "E_SCHEMA")
        assert head(clients.root) == before and status(clients.root) == ""
        return
    message = git(clients.root, "log", "-1", "--format=%B").strip()
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith("plant(clients/x): ") and message.endswith(" [source=agent]")


def test_a_dry_run_outside_git_refuses_as_the_plant_would(tmp_path: Path) -> None:
    """A dry run on a forest folder that is not its own git repository said the plant
    was valid, while the real plant refused: it answers the same E_SCHEMA now, for one
    node and for a batch, in Python and on the command line."""
    forest = copy_sample(tmp_path / "brain")
    idea = node("sales/idea", "sales/_index", "An idea", "What it is, in one line.")
    files = files_of(forest)
    with Vine(forest) as v:
        real = assert_error(v.plant(dict(idea)), "E_SCHEMA")
        assert "not a git repository of its own" in real["message"]
        for spec in (dict(idea), [dict(idea)]):
            assert assert_error(v.plant(spec, dry_run=True), "E_SCHEMA") == real
    for spec in (idea, [idea]):
        done = vine("plant", json.dumps(spec), "--dry-run", "-f", str(forest))
        assert done.exit_code == 1, done.stdout
        assert json.loads(done.stdout)["error"]["message"] == real["message"]
    assert files_of(forest) == files
