"""move: neighbours along typed edges, or a branch's children."""

from __future__ import annotations

from pathlib import Path

from monkeyllm import Vine, budget

from .forestkit import assert_error, assert_ok, leaf, make_forest, person


def _forest(tmp_path: Path) -> Path:
    return make_forest(
        tmp_path / "f",
        {
            "s/policy": leaf(
                "", summary="Policy.", links=[("related-to", "s/ledger"), ("supersedes", "s/old")]
            ),
            "s/ledger": leaf("", "dataset", summary="Ledger."),
            "s/old": leaf("", summary="Old policy."),
            "p/ana": person("", summary="Ana.", links=[("mentioned-in", "s/policy")]),
        },
    )


def test_out_in_both_and_inverse_names(tmp_path: Path) -> None:
    with Vine(_forest(tmp_path), writable=False, alpha=0) as vine:
        out = assert_ok(vine.move("s/policy"))["neighbors"]
        assert {(n["id"], n["rel"], n["direction"]) for n in out} == {
            ("s/ledger", "related-to", "out"),
            ("s/old", "supersedes", "out"),
        }
        ins = assert_ok(vine.move("s/policy", direction="in"))["neighbors"]
        assert ins == [
            {
                "id": "p/ana",
                "rel": "mentions",
                "direction": "in",
                "type": "entity",
                "summary": "Ana.",
                "heat": 0.0,
            }
        ]
        both = assert_ok(vine.move("s/policy", direction="both"))["neighbors"]
        assert len(both) == 3
        by_rel = assert_ok(vine.move("s/old", rel="superseded-by", direction="in"))["neighbors"]
        assert [n["id"] for n in by_rel] == ["s/policy"]
        by_stored = assert_ok(vine.move("s/old", rel="supersedes", direction="in"))["neighbors"]
        assert [(n["id"], n["rel"]) for n in by_stored] == [("s/policy", "superseded-by")]


def test_children(tmp_path: Path) -> None:
    with Vine(_forest(tmp_path), writable=False) as vine:
        out = assert_ok(vine.move("s/_index", rel="children"))["neighbors"]
    assert {n["id"] for n in out} == {"s/policy", "s/ledger", "s/old"}
    assert all(n["rel"] == "children" and n["direction"] == "out" for n in out)


def test_heat_orders_neighbours(tmp_path: Path) -> None:
    with Vine(_forest(tmp_path), writable=False) as vine:
        for _ in range(5):
            vine.look("s/old")
        out = vine.move("s/policy")["neighbors"]
    assert out[0]["id"] == "s/old" and out[0]["heat"] > out[1]["heat"]


def test_bad_direction_and_missing(tmp_path: Path) -> None:
    with Vine(_forest(tmp_path), writable=False) as vine:
        err = assert_error(vine.move("s/policy", direction="sideways"), "E_SCHEMA")
        assert "both" in err["message"] + err.get("hint", "")
        assert_error(vine.move("s/none"), "E_NOT_FOUND")


def test_a_rel_the_dialect_does_not_declare_is_an_error(tmp_path: Path) -> None:
    """A misspelt rel used to answer an empty list, as if the node had no neighbours."""
    with Vine(_forest(tmp_path), writable=False) as vine:
        for direction in ("out", "in", "both"):
            err = assert_error(
                vine.move("s/policy", rel="relatd-to", direction=direction), "E_SCHEMA"
            )
            assert "did you mean 'related-to'" in err["message"]
            assert "supersedes" in err["hint"] and "superseded-by" in err["hint"]
        # declared rels, their inverses and children all still answer
        assert_ok(vine.move("s/policy", rel="mentions", direction="in"))
        assert assert_ok(vine.move("s/policy", rel="part-of"))["neighbors"] == []


def test_hub_truncates_with_a_hint(tmp_path: Path) -> None:
    nodes = {f"h/n{i:02d}": leaf("", summary="neighbour summary " * 8) for i in range(60)}
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.move("h/_index", rel="children"))
    assert budget.cost(out) <= budget.MOVE
    assert out["truncated"] is True and "scan" in out["hint"]
    assert all(n["summary"] == "neighbour summary " * 8 for n in out["neighbors"])
