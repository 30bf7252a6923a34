"""``calendar``: periods newest first from the catalog, each bucket's since/until
reading exactly its nodes back through the windowed calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine, budget

from .forestkit import assert_error, assert_ok, leaf, make_forest, reader

# Every title holds "ledger", so one locate query reaches every node.
DATES = {
    "log/a": "2025-12-29",
    "log/b": "2025-12-31",
    "log/c": "2026-01-01",
    "log/d": "2026-01-04",
    "log/e": "2026-01-05",
    "log/f": "2026-03-15",
    "log/g": "2026-03-31T23:00:00",
    "log/h": "2024-07-01",
    "misc/i": "2026-03-02",
    "misc/j": "2026-01-20",
}


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nodes = {
        nid: leaf(f"# Ledger {nid}\n", title=f"Ledger {nid}", created=day, updated="2026-06-01")
        for nid, day in DATES.items()
    }
    nodes["misc/undated"] = leaf("# x\n", title="Ledger undated", created="", updated="2026-06-01")
    nodes["misc/garbled"] = leaf(
        "# x\n", title="Ledger garbled", created="sometime", updated="2026-06-01"
    )
    root = make_forest(tmp_path_factory.mktemp("cal") / "f", nodes)
    for index in ("_index.md", "log/_index.md", "misc/_index.md", "_meta/schema.md"):
        path = root / index
        path.write_text(
            path.read_text()
            .replace("created: '2026-01-10'", "created: ''")
            .replace("created: 2026-01-10", "created: ''")
        )
    return root


@pytest.fixture(scope="module")
def vine(forest: Path):
    with reader(forest) as v:
        yield v


def test_month_buckets_newest_first(vine: Vine) -> None:
    out = assert_ok(vine.calendar())
    assert out["date_field"] == "created" and out["granularity"] == "month"
    assert [(b["period"], b["nodes"]) for b in out["buckets"]] == [
        ("2026-03", 3),
        ("2026-01", 4),
        ("2025-12", 2),
        ("2024-07", 1),
    ]
    assert all(b["since"] == b["until"] == b["period"] for b in out["buckets"])
    assert out["range"] == {"first": "2024-07-01", "last": "2026-03-31", "nodes": 10}
    # Two notes, two branches and the schema; like a recursive scan, the scope's own
    # index (here the root) is not counted.
    assert out["undated"] == 5
    assert out["truncated"] is False


def test_weeks_are_iso(vine: Vine) -> None:
    out = assert_ok(vine.calendar(granularity="week"))
    weeks = {b["period"]: b for b in out["buckets"]}
    # 2025-12-29 (a Monday) to 2026-01-04 is ISO week 1 of 2026.
    assert weeks["2026-W01"] == {
        "period": "2026-W01",
        "since": "2025-12-29",
        "until": "2026-01-04",
        "nodes": 4,
    }
    assert weeks["2026-W02"]["nodes"] == 1 and weeks["2026-W02"]["since"] == "2026-01-05"
    assert weeks["2026-W14"]["since"] == "2026-03-30"  # the 31st, at 23:00
    assert [b["period"] for b in out["buckets"]] == sorted(weeks, reverse=True)


@pytest.mark.parametrize("granularity", ["day", "week", "month", "year"])
def test_each_bucket_reads_back_exactly_its_nodes(vine: Vine, granularity: str) -> None:
    out = assert_ok(vine.calendar(granularity=granularity, limit=120))
    total = 0
    for bucket in out["buckets"]:
        window = {"since": bucket["since"], "until": bucket["until"]}
        scanned = assert_ok(vine.scan("_index", recursive=True, fields=["id", "created"], **window))
        assert scanned["total"] == bucket["nodes"], bucket
        found = assert_ok(vine.locate("ledger", k=50, **window))["results"]
        assert {r["id"] for r in found} == {n["id"] for n in scanned["nodes"]}, bucket
        sniffed = assert_ok(vine.sniff("ledger", k=20, **window))["results"]
        assert {r["id"] for r in sniffed} == {n["id"] for n in scanned["nodes"]}, bucket
        total += bucket["nodes"]
    assert total == out["range"]["nodes"] == len(DATES)


def test_scope_date_field_window_and_limit(vine: Vine) -> None:
    log = assert_ok(vine.calendar(scope="log", granularity="year"))
    assert [(b["period"], b["nodes"]) for b in log["buckets"]] == [
        ("2026", 5),
        ("2025", 2),
        ("2024", 1),
    ]
    assert log["undated"] == 0
    updated = assert_ok(vine.calendar(date_field="updated"))
    assert [(b["period"], b["nodes"]) for b in updated["buckets"]] == [
        ("2026-06", 12),
        ("2026-01", 3),
    ]
    windowed = assert_ok(vine.calendar(since="2026-01", until="2026-02", granularity="day"))
    assert [b["period"] for b in windowed["buckets"]] == [
        "2026-01-20",
        "2026-01-05",
        "2026-01-04",
        "2026-01-01",
    ]
    assert windowed["window"] == {"since": "2026-01", "until": "2026-02", "date_field": "created"}
    cut = assert_ok(vine.calendar(granularity="day", limit=2))
    assert len(cut["buckets"]) == 2 and cut["truncated"] is True
    assert cut["range"]["nodes"] == len(DATES)  # the range counts every period


def test_the_budget_drops_the_far_end(tmp_path: Path) -> None:
    nodes = {
        f"d/n{i:03d}": leaf("# n\n", created=f"20{10 + i // 12:02d}-{i % 12 + 1:02d}-15")
        for i in range(150)
    }
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.calendar(granularity="month", limit=120))
    assert out["truncated"] is True and budget.cost(out) <= budget.CALENDAR
    assert out["buckets"][0]["period"] == "2026-01" and len(out["buckets"]) < 120
    assert out["buckets"][1]["period"] == "2022-06"
    assert "hint" in out


def test_since_after_until_holds_no_period(vine: Vine) -> None:
    out = assert_ok(vine.calendar(since="2026-03", until="2026-01"))
    assert out["buckets"] == []


@pytest.mark.parametrize(
    "args, code",
    [
        ({"granularity": "quarter"}, "E_SCHEMA"),
        ({"date_field": "born"}, "E_SCHEMA"),
        ({"since": "2026-13"}, "E_SCHEMA"),
        ({"limit": 0}, "E_SCHEMA"),
        ({"limit": 121}, "E_SCHEMA"),
        ({"scope": "log/a"}, "E_SCHEMA"),
        ({"scope": "nowhere"}, "E_NOT_FOUND"),
        ({"limit": "12"}, "E_SCHEMA"),
        ({"scope": "../x"}, "E_NOT_FOUND"),
    ],
)
def test_bad_arguments(vine: Vine, args: dict, code: str) -> None:
    assert_error(vine.call("calendar", args), code)


def test_grouping_runs_in_sqlite_on_the_indexed_column(vine: Vine) -> None:
    """One row per period comes out of SQLite, and the window is compared on the bare
    column, so SQLite reads it from the column's index."""
    conn = vine._forest.catalog.conn
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        out = assert_ok(vine.calendar(since="2026-01", until="2026-03"))
    finally:
        conn.set_trace_callback(None)
    grouping = [q for q in statements if "GROUP BY" in q]
    assert len(grouping) == 1
    rows = conn.execute(grouping[0]).fetchall()
    assert [(p, n) for p, n, *_ in rows] == [(b["period"], b["nodes"]) for b in out["buckets"]]
    plan = " ".join(str(r) for r in conn.execute("EXPLAIN QUERY PLAN " + grouping[0]))
    assert "nodes_created" in plan, plan


def test_visibility_counts_only_what_is_seen(vine: Vine) -> None:
    with vine.visibility(allow=["log/"]):
        out = assert_ok(vine.calendar(granularity="year"))
    assert sum(b["nodes"] for b in out["buckets"]) == 8
    with vine.visibility(deny=["log/"]):
        out = assert_ok(vine.calendar(granularity="year"))
    assert sum(b["nodes"] for b in out["buckets"]) == 2
    assert out["undated"] == 4  # misc's two notes and its index, the schema


@pytest.mark.parametrize(
    "granularity, since, until",
    [
        ("year", "2025-12-30", None),
        ("year", None, "2026-01-04"),
        ("month", "2026-03-10", "2026-03-20"),
        ("week", "2025-12-30", "2026-01-02"),
        ("week", "2026-01", None),
    ],
)
def test_a_window_cutting_a_period_narrows_its_bounds(
    vine: Vine, granularity: str, since: str | None, until: str | None
) -> None:
    """A bucket the window cuts (the year 2025 from its 30 December on) carries the
    window's own bound, so reading it back gives the nodes it counted, not its period's."""
    out = assert_ok(vine.calendar(granularity=granularity, since=since, until=until))
    assert out["buckets"]
    for bucket in out["buckets"]:
        window = {"since": bucket["since"], "until": bucket["until"]}
        scanned = assert_ok(vine.scan("_index", recursive=True, fields=["id"], **window))
        assert scanned["total"] == bucket["nodes"], bucket
    first = out["buckets"][-1] if since else out["buckets"][0]
    if since:
        assert first["since"] == since
    else:
        assert first["until"] == until
