"""Heat over time: a node climbs a ranking with use and falls back as its trail
evaporates; the pheromone survives reopening and catalog rebuilds; a read of what a
search just found (a successful hunt) lays a stronger trail; neighbours come hottest
first.

Heat is read through the calls (look's ``stats.heat`` and scan's ``heat`` report the
value before the call's own deposit). Evaporation runs on the real clock, with the
forest reopened at a tiny half-life.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine
from monkeyllm.heat import LIST_DEPOSIT, READ_DEPOSIT, STRONG_DEPOSIT

from .forestkit import assert_ok, copy_sample, forest_fixture, leaf, person, reader

SECONDS = 1 / 86400  # one second, in days
TINY = 0.002 * SECONDS  # a half-life of 2 ms
FADE = 0.1  # 50 half-lives at TINY: any heat rounds to 0.0


# Two nodes that tie for locate("otter") and sniff("otter").
twins = forest_fixture(
    {
        "a/first": leaf("# One\n\nThe otter swims.\n", title="Otter one", summary="otter"),
        "a/second": leaf("# Two\n\nThe otter dives.\n", title="Otter two", summary="otter"),
    }
)


def ranked(out: dict[str, Any]) -> list[tuple[str, float]]:
    return [(r["id"], r["score"]) for r in assert_ok(out)["results"]]


def order(out: dict[str, Any]) -> list[str]:
    return [r["id"] for r in assert_ok(out)["results"]]


def heats(vine: Vine, parent: str, **scan: Any) -> dict[str, float]:
    """Heat of a branch's nodes, as scan reports it (the same deposit lands on each)."""
    out = assert_ok(vine.scan(parent, fields=["id", "heat"], **scan))
    return {n["id"]: n["heat"] for n in out["nodes"]}


# -- climbing and evaporating --------------------------------------------------------


def test_a_used_node_climbs_then_falls_back_as_its_trail_evaporates(twins: Path) -> None:
    with Vine(twins, writable=False, alpha=1.0) as vine:
        base_locate = ranked(vine.locate("otter"))
        base_sniff = ranked(vine.sniff("otter"))
        assert base_locate[0][1] == base_locate[1][1]
        assert base_sniff[0][1] == base_sniff[1][1]
        loser = base_locate[1][0]
        assert base_sniff[1][0] == loser
        for _ in range(10):
            vine.pick(loser)
        climbed = assert_ok(vine.locate("otter"))["results"]
        assert climbed[0]["id"] == loser and climbed[0]["score"] > climbed[1]["score"]
        assert climbed[0]["heat"] > climbed[1]["heat"]
        sniffed = assert_ok(vine.sniff("otter"))["results"]
        assert sniffed[0]["id"] == loser and sniffed[0]["score"] > sniffed[1]["score"]
    # Heat is stored with the time of its last deposit and read decayed: reopened with a
    # half-life of 2 ms, the same trails are gone after a tenth of a second.
    with Vine(twins, writable=False, alpha=1.0, half_life_days=TINY) as vine:
        time.sleep(FADE)
        after = assert_ok(vine.locate("otter"))["results"]
        assert [r["heat"] for r in after] == [0.0, 0.0]
        assert [(r["id"], r["score"]) for r in after] == base_locate
        time.sleep(FADE)  # the list deposit of that locate fades as well
        faded = ranked(vine.sniff("otter"))
        assert [i for i, _ in faded] == [i for i, _ in base_sniff]
        assert faded[0][1] == faded[1][1]


def test_heat_halves_every_half_life(twins: Path) -> None:
    half_life = 0.4
    with Vine(twins, writable=False, half_life_days=half_life * SECONDS) as vine:
        for _ in range(20):
            vine.pick("a/second")
        t0a = time.time()
        h0 = assert_ok(vine.look("a/second"))["stats"]["heat"]
        t0b = time.time()
        time.sleep(half_life)
        t1a = time.time()
        h1 = assert_ok(vine.look("a/second"))["stats"]["heat"]
        t1b = time.time()
    assert h0 > 0.1
    start = h0 + READ_DEPOSIT  # the first look deposits after it reports
    slowest = start * 0.5 ** ((t1b - t0a) / half_life)
    fastest = start * 0.5 ** ((t1a - t0b) / half_life)
    assert slowest - 1e-4 <= h1 <= fastest + 1e-4
    assert h1 < 0.75 * start


def test_alpha_zero_ignores_heat(twins: Path) -> None:
    with reader(twins) as vine:
        base_locate = ranked(vine.locate("otter"))
        base_sniff = ranked(vine.sniff("otter"))
        loser = base_locate[1][0]
        for _ in range(10):
            vine.pick(loser)
        after = assert_ok(vine.locate("otter"))["results"]
        assert [(r["id"], r["score"]) for r in after] == base_locate
        assert {r["id"]: r["heat"] for r in after}[loser] > 0.1  # deposited, not used
        assert ranked(vine.sniff("otter")) == base_sniff
        assert order(vine.harvest("otter", k=2)) == [i for i, _ in base_locate]
    with Vine(twins, writable=False, alpha=1.0) as hot:
        assert order(hot.locate("otter"))[0] == loser


def test_heat_survives_reopening_and_catalog_rebuilds(twins: Path) -> None:
    with Vine(twins, writable=False) as vine:
        for _ in range(10):
            vine.pick("a/second")
        first = assert_ok(vine.locate("otter"))["results"][0]
    assert first["id"] == "a/second" and first["heat"] > 0.1
    expected = first["heat"]
    with Vine(twins, writable=False) as vine:
        again = assert_ok(vine.locate("otter"))["results"][0]
        assert again["id"] == "a/second"
        assert again["heat"] == pytest.approx(expected + LIST_DEPOSIT, abs=1e-4)
        assert_ok(vine.reindex())
        rebuilt = assert_ok(vine.locate("otter"))["results"][0]
        assert rebuilt["id"] == "a/second"
        assert rebuilt["heat"] == pytest.approx(expected + 2 * LIST_DEPOSIT, abs=1e-4)
    for suffix in ("", "-wal", "-shm"):
        (twins / "_derived" / f"catalog.db{suffix}").unlink(missing_ok=True)
    with Vine(twins, writable=False) as vine:
        fresh = assert_ok(vine.locate("otter"))["results"][0]
    assert fresh["id"] == "a/second"
    assert fresh["heat"] == pytest.approx(expected + 3 * LIST_DEPOSIT, abs=1e-4)


# -- successful hunts ----------------------------------------------------------------


hunt = forest_fixture(
    {
        "h/found": leaf("# Found\n\nheron\n", title="Heron notes", summary="Heron."),
        "h/plain": leaf("# Plain\n\nstork\n", title="Stork notes", summary="Stork."),
    }
)


def increments(vine: Vine, *reads: tuple[str, Any]) -> dict[str, float]:
    """Heat gained by h/found and h/plain across ``reads`` (each a call and its id)."""
    before = heats(vine, "h")
    for name, arg in reads:
        assert_ok(getattr(vine, name)(arg))
    after = heats(vine, "h")
    return {i: after[i] - before[i] for i in ("h/found", "h/plain")}


@pytest.mark.parametrize("search", ["locate", "sniff", "harvest"])
def test_a_pick_of_what_a_search_found_is_a_successful_hunt(hunt: Path, search: str) -> None:
    with Vine(hunt, writable=False) as vine:
        found = order(getattr(vine, search)("heron"))
        assert "h/found" in found and "h/plain" not in found
        gain = increments(vine, ("pick", "h/found"), ("pick", "h/plain"))
        assert gain["h/found"] > gain["h/plain"] > 0
        assert gain["h/found"] - gain["h/plain"] == pytest.approx(
            STRONG_DEPOSIT - READ_DEPOSIT, abs=2e-4
        )
        # the find is spent: the next pick of the same node is a plain read again
        again = increments(vine, ("pick", "h/found"), ("pick", "h/plain"))
        assert again["h/found"] == pytest.approx(again["h/plain"], abs=2e-4)
        # and a new find arms it again
        assert "h/found" in order(getattr(vine, search)("heron"))
        rearmed = increments(vine, ("pick", "h/found"), ("pick", "h/plain"))
        assert rearmed["h/found"] == pytest.approx(gain["h/found"], abs=2e-4)


def test_a_look_between_the_find_and_the_pick_keeps_the_hunt(hunt: Path) -> None:
    with Vine(hunt, writable=False) as vine:
        assert order(vine.locate("heron")) == ["h/found"]
        looked = increments(vine, ("look", "h/found"), ("look", "h/plain"))
        assert looked["h/found"] == pytest.approx(looked["h/plain"], abs=2e-4)
        picked = increments(vine, ("pick", "h/found"), ("pick", "h/plain"))
        assert picked["h/found"] - picked["h/plain"] == pytest.approx(
            STRONG_DEPOSIT - READ_DEPOSIT, abs=2e-4
        )


def test_a_batch_pick_rewards_only_what_was_found(hunt: Path) -> None:
    with Vine(hunt, writable=False) as vine:
        assert order(vine.locate("heron")) == ["h/found"]
        gain = increments(vine, ("pick", ["h/found", "h/plain"]))
    assert gain["h/found"] - gain["h/plain"] == pytest.approx(
        STRONG_DEPOSIT - READ_DEPOSIT, abs=2e-4
    )


def test_without_a_search_a_pick_is_a_plain_read(hunt: Path) -> None:
    with Vine(hunt, writable=False) as vine:
        gain = increments(vine, ("pick", "h/found"), ("pick", "h/plain"))
    assert gain["h/found"] == pytest.approx(gain["h/plain"], abs=2e-4)
    # a find is remembered by the Vine that made it, not by the forest
    with Vine(hunt, writable=False) as finder:
        assert "h/found" in order(finder.locate("heron"))
    with Vine(hunt, writable=False) as other:
        gain = increments(other, ("pick", "h/found"), ("pick", "h/plain"))
    assert gain["h/found"] == pytest.approx(gain["h/plain"], abs=2e-4)


@pytest.mark.parametrize(
    ("search", "arg"), [("sniff", "total_invoice"), ("locate", "orders 2026 ledger")]
)
def test_a_query_after_a_search_is_a_successful_hunt(tmp_path: Path, search: str, arg: str) -> None:
    root = copy_sample(tmp_path / "brain")
    orders, prospects = "sales/orders-2026", "sales/pipeline/prospects-q2"
    with Vine(root, writable=False) as vine:
        sql = {
            d: "SELECT COUNT(*) FROM " + next(iter(vine.look(d)["query_manual"]["tables"]))
            for d in (orders, prospects)
        }

        def gained(*ids: str) -> dict[str, float]:
            before = heats(vine, "sales", recursive=True, filter={"type": "dataset"})
            for node_id in ids:
                assert_ok(vine.query(node_id, sql[node_id]))
            after = heats(vine, "sales", recursive=True, filter={"type": "dataset"})
            return {d: after[d] - before[d] for d in (orders, prospects)}

        found = order(getattr(vine, search)(arg, k=3))
        assert orders in found and prospects not in found
        hunted = gained(orders, prospects)
        assert hunted[orders] - hunted[prospects] == pytest.approx(
            STRONG_DEPOSIT - READ_DEPOSIT, abs=2e-4
        )
        plain = gained(orders, prospects)
        assert plain[orders] == pytest.approx(plain[prospects], abs=2e-4)


# -- neighbours, hottest first -------------------------------------------------------


graph = forest_fixture(
    {
        "g/hub": leaf(
            "# Hub\n",
            title="Hub",
            links=[("related-to", "g/a"), ("related-to", "g/b"), ("related-to", "g/c")],
        ),
        "g/a": leaf("# A\n", title="A"),
        "g/b": leaf("# B\n", title="B"),
        "g/c": leaf("# C\n", title="C"),
        "g/d": leaf("# D\n", title="D", links=[("related-to", "g/hub")]),
        "g/e": person("# E\n", title="E", links=[("mentioned-in", "g/hub")]),
    }
)


def hottest_first(cold: list[str], heat: dict[str, float]) -> list[str]:
    """The order: heat descending, ties in the cold (catalog) order."""
    return sorted(cold, key=lambda i: -heat[i])


def test_look_and_move_order_neighbours_hottest_first(graph: Path) -> None:
    with Vine(graph, writable=False) as vine:
        cold = assert_ok(vine.look("g/hub"))
        cold_out = [e["target"] for e in cold["edges_out"]]
        cold_in = [e["source"] for e in cold["edges_in"]]
        cold_children = [c["id"] for c in assert_ok(vine.look("g/_index"))["children"]]
        cold_both = [n["id"] for n in assert_ok(vine.move("g/hub", direction="both"))["neighbors"]]
        assert cold_out == ["g/a", "g/b", "g/c"] and set(cold_in) == {"g/d", "g/e"}
        for node_id, times in (("g/c", 3), ("g/b", 2), (cold_in[1], 1)):
            for _ in range(times):
                vine.pick(node_id)
        warm = assert_ok(vine.look("g/hub"))
        assert [e["target"] for e in warm["edges_out"]] == ["g/c", "g/b", "g/a"]
        assert [e["source"] for e in warm["edges_in"]] == [cold_in[1], cold_in[0]]
        moved_in = assert_ok(vine.move("g/hub", direction="in"))["neighbors"]
        assert [n["id"] for n in moved_in] == [cold_in[1], cold_in[0]]
        assert moved_in[0]["heat"] > moved_in[1]["heat"]
        heat = heats(vine, "g")
        both = assert_ok(vine.move("g/hub", direction="both"))["neighbors"]
        assert [n["id"] for n in both] == hottest_first(cold_both, heat)
        heat = heats(vine, "g")
        children = [c["id"] for c in assert_ok(vine.look("g/_index"))["children"]]
        assert children == hottest_first(cold_children, heat)
        assert children[:2] == ["g/c", "g/b"]
        heat = heats(vine, "g")
        moved = assert_ok(vine.move("g/_index", rel="children"))["neighbors"]
        assert [n["id"] for n in moved] == hottest_first(cold_children, heat)
        assert [n["heat"] for n in moved] == sorted((n["heat"] for n in moved), reverse=True)


def test_a_few_ids_read_alone_agree_with_the_whole_table(tmp_path: Path) -> None:
    """A one-shot process reads the heat of a few ids without loading the table; what
    it reads, deposits included, is what a process holding every key reads."""
    from monkeyllm.heat import PARTIAL_MAX, HeatStore

    clock = [1_000_000.0]
    writer = HeatStore(tmp_path, half_life_days=1.0, clock=lambda: clock[0])
    writer.deposit([f"n/{i}" for i in range(PARTIAL_MAX + 10)], READ_DEPOSIT)
    writer.deposit(["n/1", "n/2"], STRONG_DEPOSIT)
    clock[0] += 3600
    few = writer.many(["n/1", "n/3", "absent"])  # pending, not yet written
    writer.flush()
    writer.close()
    reader = HeatStore(tmp_path, half_life_days=1.0, clock=lambda: clock[0])
    reader.deposit(["n/3"], STRONG_DEPOSIT)
    alone = reader.many(["n/1", "n/3", "absent"])
    everything = reader.hot()  # loads the whole table
    reader.close()
    decayed = 0.5 ** (3600 / 86400)
    assert few["n/1"] == pytest.approx((READ_DEPOSIT + STRONG_DEPOSIT) * decayed, abs=1e-4)
    assert alone["n/1"] == few["n/1"] == everything["n/1"]
    assert (
        alone["n/3"]
        == everything["n/3"]
        == pytest.approx(READ_DEPOSIT * decayed + STRONG_DEPOSIT, abs=1e-4)
    )
    assert alone["absent"] == 0.0 and "absent" not in everything
    assert len(everything) == PARTIAL_MAX + 10
