"""scan: metadata queries over a branch, from the catalog alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine, budget

from .forestkit import assert_error, assert_ok, forest_fixture, leaf, make_forest, person

forest = forest_fixture(
    {
        "sales/orders": leaf(
            "", "dataset", tags=["sales", "ledger"], updated="2026-06-30", payload_type="sqlite"
        ),
        "sales/policy": leaf(
            "",
            tags=["sales", "policy"],
            updated="2026-02-01",
            confidence=0.6,
            origin="https://example.com/p",
        ),
        "sales/pipe/prospects": leaf(
            "", "dataset", tags=["sales"], updated="2026-04-02", payload_type="sqlite"
        ),
        "sales_archive/old": leaf("", tags=["sales"]),
        "people/ana": person("", tags=["people"]),
    }
)


def ids(out: dict) -> set[str]:
    return {n["id"] for n in assert_ok(out)["nodes"]}


def test_children_and_subtree(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert ids(vine.scan("sales")) == {"sales/orders", "sales/policy", "sales/pipe/_index"}
        assert ids(vine.scan("sales/_index", recursive=True)) == {
            "sales/orders",
            "sales/policy",
            "sales/pipe/_index",
            "sales/pipe/prospects",
        }
        everything = ids(vine.scan("_index", recursive=True))
        assert "_meta/schema" in everything and "_index" not in everything


def test_prefix_is_exact_not_like(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert "sales_archive/old" not in ids(vine.scan("sales", recursive=True))


def test_seed_example_filter(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = vine.scan(
            "_index",
            filter={"type": "dataset", "updated_after": "2026-03-01", "tags_any": ["sales"]},
            fields=["id", "summary", "payload_type"],
            recursive=True,
            limit=20,
        )
    assert ids(out) == {"sales/orders", "sales/pipe/prospects"}
    assert all(set(n) == {"id", "summary", "payload_type"} for n in out["nodes"])
    assert out["total"] == 2 and out["returned"] == 2 and out["truncated"] is False


@pytest.mark.parametrize(
    "spec, expected",
    [
        ({"tags_any": ["policy", "ledger"]}, {"sales/orders", "sales/policy"}),
        ({"updated_before": "2026-03-01"}, {"sales/policy", "sales/pipe/_index"}),
        ({"min_confidence": 0.9}, {"sales/orders", "sales/pipe/prospects", "sales/pipe/_index"}),
        ({"origin_prefix": "https://example.com"}, {"sales/policy"}),
        ({"kind": "branch"}, {"sales/pipe/_index"}),
        ({"kind": "note", "type": "note"}, {"sales/policy"}),
    ],
)
def test_filters(forest: Path, spec: dict, expected: set[str]) -> None:
    with Vine(forest, writable=False) as vine:
        assert ids(vine.scan("sales", filter=spec, recursive=True)) == expected


def test_json_fields_are_decoded_and_meta_is_marked(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(
            vine.scan("_index", fields=["tags", "trail", "kind", "heat", "outline"], recursive=True)
        )
    by_id = {n["id"]: n for n in out["nodes"]}
    assert by_id["sales/orders"]["tags"] == ["sales", "ledger"]
    assert by_id["sales/pipe/prospects"]["trail"] == ["_index", "sales/_index", "sales/pipe/_index"]
    assert by_id["sales/pipe/_index"]["kind"] == "branch"
    assert by_id["_meta/schema"]["system"] is True


def test_errors(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert_error(vine.scan("sales", fields=["payload"]), "E_SCHEMA")
        assert_error(vine.scan("sales", filter={"colour": "red"}), "E_SCHEMA")
        assert_error(vine.scan("nowhere"), "E_NOT_FOUND")
        assert_error(vine.scan("sales/policy"), "E_SCHEMA")
        assert_error(vine.scan("sales", filter={"kind": "cat"}), "E_SCHEMA")


def test_limit_cursor_and_total(tmp_path: Path) -> None:
    nodes = {f"b/n{i:03d}": leaf("") for i in range(120)}
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.scan("b", limit=7, fields=["id"]))
        assert out["returned"] == 7 and out["total"] == 120 and out["truncated"] is True
        seen: list[str] = []
        cursor = ""
        while True:
            page = assert_ok(vine.scan("b", after=cursor, fields=["id"]))
            seen += [n["id"] for n in page["nodes"]]
            assert budget.cost(page) <= budget.SCAN
            if "next" not in page:
                assert page["truncated"] is False
                break
            cursor = page["next"]
    assert seen == sorted(f"b/n{i:03d}" for i in range(120))


def test_budget_cut_says_so(tmp_path: Path) -> None:
    nodes = {f"b/n{i:02d}": leaf("", summary="long summary words " * 10) for i in range(50)}
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.scan("b", fields=["id", "summary"]))
    assert budget.cost(out) <= budget.SCAN
    assert out["truncated"] is True and out["returned"] == len(out["nodes"]) < out["total"]
    assert "fields" in out["hint"]


def test_heat_orders_nodes(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        for _ in range(3):
            vine.look("sales/policy")
        out = vine.scan("sales", fields=["id", "heat"])
    assert out["nodes"][0]["id"] == "sales/policy" and out["nodes"][0]["heat"] > 0


def test_window(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.scan("sales", recursive=True, since="2026-04", date_field="updated"))
    assert ids(out) == {"sales/orders", "sales/pipe/prospects"}
    assert out["window"] == {"since": "2026-04", "until": None, "date_field": "updated"}
