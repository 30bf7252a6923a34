"""look: the digest of a node within 500 tokens."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from monkeyllm import Vine, budget
from monkeyllm.forest import coverage_text

from .forestkit import (
    assert_error,
    assert_ok,
    leaf,
    make_forest,
    node_meta,
    person,
    reader,
    write_node,
)

DIGEST_HEAD = "id type title summary tags confidence created updated source".split()


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    root = make_forest(
        tmp_path / "f",
        {
            "sales/policy": leaf(
                "# Policy\n\n## Channels\n\ntext\n\n### Retail\n\n## Deadlines\n\n"
                "```sh\n# not a header\n```\n",
                summary="Return windows.",
                tags=["sales"],
                links=[
                    ("related-to", "sales/ledger"),
                    ("part-of", "sales/_index"),
                    ("related-to", "ghost/node"),
                ],
            ),
            "people/ana": person(
                "# Ana\n", summary="Commercial director.", links=[("mentioned-in", "sales/policy")]
            ),
            "sales/ledger": leaf(
                "# Ledger\n\n## Query manual\n\nTables:\n- `orders(id INTEGER)`\n\n"
                "Example queries:\n- `SELECT * FROM orders LIMIT 5`\n"
                "- `SELECT COUNT(*) FROM orders`\n\n## Notes\n\nvalue is in cents.",
                "dataset",
                summary="Orders, one row each.",
                payload="ledger.db",
                payload_type="sqlite",
            ),
        },
    )
    db = sqlite3.connect(root / "sales" / "ledger.db")
    db.execute("CREATE TABLE orders(id INTEGER, customer TEXT, value BLOB)")
    db.executemany(
        "INSERT INTO orders VALUES(?,?,?)", [(i, f"c{i}", b"\x00\x01") for i in range(10)]
    )
    db.commit()
    db.close()
    return root


def test_leaf_digest_shape(forest: Path) -> None:
    with reader(forest) as vine:
        out = assert_ok(vine.look("sales/policy"))
    assert list(out)[: len(DIGEST_HEAD)] == DIGEST_HEAD
    assert out["outline"] == ["Channels", "Retail", "Deadlines"]
    assert out["tags"] == ["sales"]
    assert out["edges_out"][0] == {
        "rel": "related-to",
        "target": "sales/ledger",
        "target_summary": "Orders, one row each.",
    }
    ghost = next(e for e in out["edges_out"] if e["target"] == "ghost/node")
    assert ghost["target_summary"] == ""
    assert out["edges_in"] == [{"rel": "mentions", "source": "people/ana"}]
    assert out["stats"]["degree"] == 4
    assert out["stats"]["body_tokens"] > 0
    assert "truncated" not in out


def test_branch_digest_has_children_and_coverage(sample_root: Path) -> None:
    with Vine(sample_root, writable=False) as vine:
        out = assert_ok(vine.look("sales/_index"))
    assert "outline" not in out
    ids = [c["id"] for c in out["children"]]
    assert "sales/exchange-policy" in ids
    # sales holds five leaves and one sub-branch: each noun as its count needs
    assert out["coverage"] == "5 bananas, 1 sub-branch."


def test_master_index_cross_trails(sample_root: Path) -> None:
    with Vine(sample_root, writable=False) as vine:
        out = assert_ok(vine.look("_index"))
    assert out["cross_trails"] and all("[[" in t for t in out["cross_trails"])


def test_dataset_digest(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.look("sales/ledger"))
    assert out["query_manual"] == {
        "tables": {"orders": ["id", "customer", "value"]},
        "example_queries": ["SELECT * FROM orders LIMIT 5", "SELECT COUNT(*) FROM orders"],
    }
    assert out["sample_rows"]["columns"] == ["id", "customer", "value"]
    assert out["sample_rows"]["rows"][0] == [0, "c0", "<blob 2 bytes>"]
    assert len(out["sample_rows"]["rows"]) == 3
    assert out["notes"] == "value is in cents."


MANUALS = [
    # labelled bullets, as the existing engine's forests and people write them
    (
        "Example queries:\n- Total by region: `SELECT region, SUM(v) FROM orders GROUP BY region`"
        "\n- Orders per month — `SELECT substr(d, 1, 7), COUNT(*) FROM orders GROUP BY 1`\n"
        "* `SELECT COUNT(*) FROM orders`\n- `SELECT 1`\n",
        [
            "SELECT region, SUM(v) FROM orders GROUP BY region",
            "SELECT substr(d, 1, 7), COUNT(*) FROM orders GROUP BY 1",
            "SELECT COUNT(*) FROM orders",
        ],
    ),
    # a fenced block of statements, a numbered item and an unquoted bullet
    (
        "```sql\n-- the biggest orders\nSELECT id, v FROM orders\nORDER BY v DESC LIMIT 5;\n"
        "WITH t AS (SELECT 1 AS x) SELECT x FROM t;\n```\n\n1. SELECT * FROM orders LIMIT 5\n",
        [
            "SELECT id, v FROM orders\nORDER BY v DESC LIMIT 5",
            "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
            "SELECT * FROM orders LIMIT 5",
        ],
    ),
    # prose and table lists are not statements
    (
        "Tables:\n- `orders(id INTEGER)`\n\nSelect the rows you need; `id` is the key.\n"
        "- Sum by hand: `SELECT SUM(v) FROM orders`\n",
        ["SELECT SUM(v) FROM orders"],
    ),
]


@pytest.mark.parametrize("manual, expected", MANUALS, ids=["labelled", "fenced", "prose"])
def test_example_queries_in_the_forms_people_write(
    forest: Path, manual: str, expected: list[str]
) -> None:
    path = forest / "sales" / "ledger.md"
    text = path.read_text(encoding="utf-8")
    head, _, _ = text.partition("## Query manual")
    path.write_text(head + "## Query manual\n\n" + manual + "\n## Notes\n\nx\n", encoding="utf-8")
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.look("sales/ledger"))
    assert out["query_manual"]["example_queries"] == expected


def test_fields_keeps_only_what_was_asked(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert vine.look("sales/policy", fields=["summary"]) == {
            "id": "sales/policy",
            "summary": "Return windows.",
        }
        assert set(vine.look("sales/ledger", fields=["notes", "stats"])) == {"id", "notes", "stats"}


def test_fields_can_ask_for_the_revision_a_graft_names(forest: Path) -> None:
    """Every key a digest holds can be asked for by name, the revision too (what a
    graft's if_revision names): the call's schema and the engine's check agree."""
    from monkeyllm.registry import CALLS

    with Vine(forest, writable=False) as vine:
        whole = assert_ok(vine.look("sales/policy"))
        assert vine.look("sales/policy", fields=["revision"]) == {
            "id": "sales/policy",
            "revision": whole["revision"],
        }
        listed = CALLS["look"].input_schema()["properties"]["fields"]
        assert "revision" in str(listed)
        for key in whole:
            assert key in str(listed), key
        assert vine.call("look", {"id": "sales/policy", "fields": ["revision"]}) == {
            "id": "sales/policy",
            "revision": whole["revision"],
        }


@pytest.mark.parametrize("fields", [["summry"], ["notes", "nope"], ['["summary"]']])
def test_an_unknown_field_is_an_error_naming_the_valid_ones(
    forest: Path, fields: list[str]
) -> None:
    """An unknown field used to return only the id, as if the node had nothing."""
    with Vine(forest, writable=False) as vine:
        for ids in ("sales/policy", ["sales/policy", "sales/ledger"]):
            err = assert_error(vine.look(ids, fields=fields), "E_SCHEMA")
            assert "fields" in err["message"]
            assert "summary" in err["hint"] and "edges_out" in err["hint"]
        err = assert_error(vine.look("sales/policy", fields=["summry"]), "E_SCHEMA")
        assert "did you mean 'summary'" in err["message"]
        assert err["message"].endswith("got string 'summry'")
        # A word that is no slip of the keys gets the list, not a far-fetched guess.
        err = assert_error(vine.look("sales/policy", fields=["nope"]), "E_SCHEMA")
        assert "did you mean" not in err["message"] and "'summary'" in err["message"]


def test_missing_and_escaping_ids(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        err = assert_error(vine.look("sales/nothing"), "E_NOT_FOUND")
        assert err["message"] == "node not found: sales/nothing"
        for bad in ("../x", "/etc/passwd", "a/../../b", "x\x00y", ""):
            assert_error(vine.look(bad), "E_NOT_FOUND")


def test_moved_id_answers_e_moved(forest: Path) -> None:
    write_node(
        forest, "sales/policy-new", node_meta("sales/policy-new", moved_from=["sales/old-policy"])
    )
    with Vine(forest, writable=False) as vine:
        err = assert_error(vine.look("sales/old-policy"), "E_MOVED")
    assert err["moved_to"] == "sales/policy-new"


def test_batch(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.look(["sales/policy", "nope/x", "people/ana", "sales/policy"]))
        assert [n["id"] for n in out["nodes"]] == ["sales/policy", "people/ana"]
        assert out["missing"] == ["nope/x"] and out["dropped"] == []
        assert out["truncated"] is False
        assert_error(vine.look([]), "E_SCHEMA")
        assert_error(vine.look([f"x{i}" for i in range(11)]), "E_SCHEMA")


def test_budget_sheds_lists_then_sample_rows(tmp_path: Path) -> None:
    links = [{"rel": "related-to", "target": f"hub/n{i:02d}"} for i in range(40)]
    nodes = {
        f"hub/n{i:02d}": leaf(
            "", summary="A neighbour with a long summary " * 3, links=[("related-to", "hub/center")]
        )
        for i in range(40)
    }
    body = "# Center\n\n" + "\n\n".join(
        f"## Section number {i} with a long title" for i in range(60)
    )
    nodes["hub/center"] = leaf(body, summary="The hub.", links=links)
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.look("hub/center"))
    assert budget.cost(out) <= budget.LOOK
    assert out["truncated"] is True
    assert out["truncated_fields"][0] == "outline"
    assert out["stats"]["degree"] == 80
    assert len(out["edges_out"]) <= budget.EDGE_CAP


def test_look_deposits_heat(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        before = vine.look("people/ana")["stats"]["heat"]
        after = vine.look("people/ana")["stats"]["heat"]
    assert after > before


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("1 bananas, 1 sub-branches", "1 banana, 1 sub-branch."),
        ("0 bananas, 2 sub-branches", "0 bananas, 2 sub-branches."),
        ("3 bananas, 0 sub-branches.", "3 bananas, 0 sub-branches."),
        ("1 banana, 1 sub-branch", "1 banana, 1 sub-branch."),
        ("not a count", "not a count"),
    ],
)
def test_coverage_counts_read_in_words(raw: str, shown: str) -> None:
    assert coverage_text(raw) == shown
