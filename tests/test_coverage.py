"""``coverage``: the regions of a forest with their sizes, dates and shared origin, and
totals that add up; one catalog read that deposits no heat."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine, budget
from monkeyllm.reads.coverage import common_origin

from .forestkit import assert_error, assert_ok, leaf, make_forest, person


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = "https://intranet.example.com/docs/"
    nodes = {
        "docs/a": (
            "document",
            {"created": "2026-02-01", "origin": docs + "a.pdf", "source": "ingest"},
            "# a\n",
        ),
        "docs/b": (
            "document",
            {"created": "2026-03-05", "origin": docs + "sub/b.pdf", "source": "ingest"},
            "# b\n",
        ),
        "docs/c": leaf("# c\n", created="2025-11-30", source="agent"),
        "docs/deep/d": leaf("# d\n", created="", source="agent"),
        "people/ana": person("# ana\n", created="2025-01-02", source="manual"),
        "loose": leaf("# loose\n", created="2026-01-01"),
    }
    return make_forest(tmp_path_factory.mktemp("cov") / "f", nodes)


@pytest.fixture(scope="module")
def vine(forest: Path):
    with Vine(forest, writable=False) as v:
        yield v


def test_regions_and_totals_that_add_up(vine: Vine) -> None:
    out = assert_ok(vine.coverage())
    assert [r["id"] for r in out["roots"]] == ["docs/_index", "people/_index"]
    docs = out["roots"][0]
    assert docs == {
        "id": "docs/_index",
        "title": "Docs",
        "nodes": 6,
        "branches": 2,
        "first": "2025-11-30",
        "last": "2026-03-05",
        "origin": "https://intranet.example.com/docs/",
        "without_origin": 4,
    }
    assert out["roots"][1]["nodes"] == 2 and out["roots"][1]["origin"] is None
    # Every node but _meta/*: the regions, the leaf beside them, and the root itself.
    assert out["total"] == 10 and out["system"] == 1
    assert out["total"] == sum(r["nodes"] for r in out["roots"]) + 1 + 1
    assert sum(out["types"].values()) == out["total"] == sum(out["sources"].values())
    assert out["types"] == {"branch": 4, "note": 3, "document": 2, "entity": 1}
    assert out["sources"] == {"unset": 5, "agent": 2, "ingest": 2, "manual": 1}
    assert out["undated"] == 1 and out["date_field"] == "created"
    assert out["truncated"] is False


def test_the_origin_is_what_scan_takes(vine: Vine) -> None:
    docs = assert_ok(vine.coverage())["roots"][0]
    scanned = assert_ok(
        vine.scan(
            "docs",
            recursive=True,
            fields=["id", "origin"],
            filter={"origin_prefix": docs["origin"]},
        )
    )
    assert scanned["total"] == docs["nodes"] - docs["without_origin"] == 2


@pytest.mark.parametrize(
    "low, high, common",
    [
        ("https://x.com/docs/a.pdf", "https://x.com/docs/sub/b.pdf", "https://x.com/docs/"),
        ("https://x.com/docs/a.pdf", "https://x.com/docs/a.pdf", "https://x.com/docs/a.pdf"),
        ("file:///srv/a/x.docx", "file:///srv/b/y.docx", "file:///srv/"),
        ("https://a.com/x", "https://b.com/y", None),
        ("s3://b/x", "urn:isbn:1", None),
        (None, None, None),
    ],
)
def test_a_common_origin_ends_at_a_path_boundary(
    low: str | None, high: str | None, common: str | None
) -> None:
    assert common_origin(low, high) == common


def test_a_scope_its_regions_and_its_date_field(vine: Vine) -> None:
    out = assert_ok(vine.coverage(scope="docs", date_field="updated"))
    assert [r["id"] for r in out["roots"]] == ["docs/deep/_index"]
    assert out["total"] == 6 and out["system"] == 0 and out["date_field"] == "updated"
    assert out["roots"][0]["first"] == "2026-01-10"
    assert_error(vine.coverage(scope="docs/a"), "E_SCHEMA")
    assert_error(vine.coverage(scope="nowhere"), "E_NOT_FOUND")
    assert_error(vine.call("coverage", {"date_field": "born"}), "E_SCHEMA")


def test_it_deposits_no_heat_and_fits_its_budget(tmp_path: Path) -> None:
    nodes = {f"region-{i:02d}-with-a-rather-long-name/n": leaf("# n\n") for i in range(60)}
    root = make_forest(tmp_path / "f", nodes)
    with Vine(root, writable=False) as vine:
        out = assert_ok(vine.coverage())
        assert out["truncated"] is True and budget.cost(out) <= budget.COVERAGE
        assert 0 < len(out["roots"]) < 60 and out["total"] == 121
        assert "hint" in out
        assert vine._forest.heat.hot() == {}


def test_visibility_is_the_callers_own_subtrees(vine: Vine) -> None:
    with vine.visibility(allow=["docs/"]):
        out = assert_ok(vine.coverage())
    assert [r["id"] for r in out["roots"]] == ["docs/_index"]
    assert out["total"] == 6 and out["system"] == 0
    assert sum(out["types"].values()) == 6
    with vine.visibility(deny=["docs/deep/"]):
        out = assert_ok(vine.coverage())
    assert out["roots"][0]["nodes"] == 4 and out["roots"][0]["branches"] == 1
    assert out["total"] == 8 and out["undated"] == 0
