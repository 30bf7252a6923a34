"""prune, transplant, history, calendar and coverage on the Station: REST routes with
their capabilities and statuses, audited, and every scope rule of the reference (no
count or id from outside the key's scope); the Station's /mcp answers the same."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monkeyllm.serve.station import audit
from monkeyllm.serve.station.store import Store

from .forestkit import files_of, git, head, node
from .test_station import WORD, post, serving_station


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving_station(tmp_path_factory.mktemp("lifecycle")) as made:
        yield made


def acme(st: dict[str, Any]) -> Path:
    return st["root"] / "acme"


def hidden_nothing(text: str) -> None:
    assert WORD not in text and WORD.lower() not in text, text[:400]
    assert "secret/" not in text, text[:400]


def unchanged(st: dict[str, Any]) -> tuple[str, dict[str, bytes]]:
    return head(acme(st)), files_of(acme(st))


def test_capabilities(station: dict[str, Any]) -> None:
    for call, args in (
        ("prune", {"id": "sales/price-list"}),
        ("transplant", {"id": "sales/price-list", "new_id": "sales/x"}),
    ):
        got = post(station, "reader", call, args)
        assert got.status_code == 403 and got.json()["error"]["code"] == "E_FORBIDDEN"
        assert "write" in got.json()["error"]["message"]
    for call, args in (("history", {"id": "sales/price-list"}), ("calendar", {}), ("coverage", {})):
        assert post(station, "reader", call, args).status_code == 200, call


def test_prune_is_409_while_anchored_and_names_only_visible_anchors(
    station: dict[str, Any],
) -> None:
    before = unchanged(station)
    full = post(station, "all", "prune", {"id": "sales/exchange-policy"})
    assert full.status_code == 409
    error = full.json()["error"]
    assert error["code"] == "E_ANCHORED" and error["anchor_count"] == 6
    assert {"source": "secret/plan", "rel": "related-to"} in error["anchors"]
    assert "out_of_scope" not in error
    for force in (False, True):
        scoped = post(station, "deny", "prune", {"id": "sales/exchange-policy", "force": force})
        assert scoped.status_code == 409
        hidden_nothing(scoped.text)
        err = scoped.json()["error"]
        assert err["out_of_scope"] == 1 and err["anchor_count"] == 5
        assert len(err["anchors"]) == 5
    sales = post(station, "sales", "prune", {"id": "sales/exchange-policy", "force": True})
    err = sales.json()["error"]
    assert sales.status_code == 409 and err["anchor_count"] == 0
    assert err["out_of_scope"] == 6 and err["anchors"] == []
    assert unchanged(station) == before


def test_hidden_ids_are_absent_ones(tmp_path: Path) -> None:
    """The same question about a hidden node (or subtree), before and after it is gone,
    gets the same bytes: the 404 of an absent one."""
    probes = [
        (call, {"id": node, **extra})
        for node in ("secret/plan", "secret/plam")
        for call, extra in (
            ("prune", {}),
            ("prune", {"force": True}),
            ("history", {}),
            ("transplant", {"new_id": "sales/moved-plan"}),
        )
    ]
    probes += [
        (call, {"scope": scope})
        for call in ("calendar", "coverage")
        for scope in ("secret", "secret/plan")
    ]
    with serving_station(tmp_path) as st:
        before = [post(st, "deny", call, args) for call, args in probes]
        assert {r.status_code for r in before} == {404}, [r.text for r in before]
        heads = unchanged(st)
        assert all(b"secret/plan'" not in r.content for r in before)
        for call in ("calendar", "coverage"):
            assert post(st, "sales", call, {"scope": "people"}).status_code == 404
        shutil.rmtree(tmp_path / "acme" / "secret")
        after = [post(st, "deny", call, args) for call, args in probes]
        assert [r.content for r in after] == [r.content for r in before]
        assert heads[0] == head(acme(st))


def test_transplant_source_like_a_read_destination_like_a_plant(station: dict[str, Any]) -> None:
    before = unchanged(station)
    # A backlink outside the key's scope cannot be rewritten: the whole call refuses.
    for key, node_id, count in (
        ("deny", "sales/exchange-policy", 1),
        ("sales", "sales/discount-ladder", 4),
    ):
        got = post(station, key, "transplant", {"id": node_id, "new_id": node_id + "-moved"})
        assert got.status_code == 409, got.text
        hidden_nothing(got.text)
        assert got.json()["error"]["out_of_scope"] == count
    for key, new_id in (
        ("sales", "people/price-list"),
        ("deny", "secret/price-list"),
        ("sales", "price-list"),
    ):
        got = post(station, key, "transplant", {"id": "sales/pipeline/playbook", "new_id": new_id})
        assert got.status_code == 403 and got.json()["error"]["code"] == "E_FORBIDDEN"
        assert "sales/" in got.json()["error"]["hint"] or key == "deny"
    assert unchanged(station) == before


def test_a_scoped_move_commits_audited_with_its_principal(station: dict[str, Any]) -> None:
    got = post(
        station,
        "sales",
        "transplant",
        {"id": "sales/pipeline/playbook", "new_id": "sales/playbook"},
    )
    assert got.status_code == 200, got.text
    out = got.json()
    assert out["trail"] == ["sales/_index"]  # the hidden root is not named
    sha = out["commit"]
    assert (
        git(acme(station), "log", "-1", "--format=%B", sha)
        .rstrip()
        .endswith("station-principal: sales")
    )
    history = post(station, "sales", "history", {"id": "sales/playbook"}).json()
    assert history["entries"][0] == {
        "commit": sha,
        "at": history["entries"][0]["at"],
        "action": "transplant",
        "by": "sales",
        "message": "transplant(sales/pipeline/playbook -> sales/playbook)",
    }
    moved = post(station, "sales", "look", {"id": "sales/pipeline/playbook"})
    assert moved.status_code == 404
    assert moved.json()["error"]["code"] == "E_MOVED"
    assert moved.json()["error"]["moved_to"] == "sales/playbook"
    rows = audit.rows(Store(station["root"]), limit=500)
    mine = [r for r in rows if r["commit_sha"] == sha]
    assert mine and mine[0]["call"] == "transplant" and mine[0]["principal"] == "sales"
    assert {"E_ANCHORED", "E_FORBIDDEN"} <= {r["outcome"] for r in rows}


def test_moved_to_outside_the_scope_answers_not_found(station: dict[str, Any]) -> None:
    note = node("sales/to-hide", "sales/_index", "To hide", f"Moved into the {WORD} subtree later.")
    assert post(station, "all", "plant", {"node": note}).status_code == 200
    got = post(station, "all", "transplant", {"id": "sales/to-hide", "new_id": "secret/to-hide"})
    assert got.status_code == 200, got.text
    hidden = {key: post(station, key, "look", {"id": "sales/to-hide"}) for key in ("deny", "sales")}
    # The one who can see where it went learns it moved.
    assert (
        post(station, "all", "look", {"id": "sales/to-hide"}).json()["error"]["moved_to"]
        == "secret/to-hide"
    )
    # Once the moved node is gone, the old id is absent: the same bytes as before.
    assert post(station, "all", "prune", {"id": "secret/to-hide"}).status_code == 200
    for key, before in hidden.items():
        absent = post(station, key, "look", {"id": "sales/to-hide"})
        assert before.status_code == absent.status_code == 404
        assert before.json()["error"]["code"] == "E_NOT_FOUND"
        assert before.content == absent.content, key


def test_history_names_no_hidden_node(station: dict[str, Any]) -> None:
    full = post(station, "all", "history", {"id": "_index", "limit": 50}).json()
    assert any(WORD in e["message"] for e in full["entries"])  # the probe reaches it
    scoped = post(station, "deny", "history", {"id": "_index", "limit": 50})
    assert scoped.status_code == 200
    hidden_nothing(scoped.text)
    entries = scoped.json()["entries"]
    assert [e["commit"] for e in entries] == [e["commit"] for e in full["entries"]]
    assert any(e["message"] == "plant(…)" for e in entries)
    policy = post(station, "deny", "history", {"id": "sales/exchange-policy"}).json()
    hidden_nothing(json.dumps(policy))
    assert post(station, "sales", "history", {"id": "_index"}).status_code == 404


def test_calendar_and_coverage_count_only_the_visible(station: dict[str, Any]) -> None:
    full = post(station, "all", "coverage", {}).json()
    hidden = post(station, "all", "coverage", {"scope": "secret"}).json()
    assert "total" in hidden, hidden
    hidden = hidden["total"]
    assert hidden >= 2
    deny = post(station, "deny", "coverage", {})
    hidden_nothing(deny.text)
    scoped = deny.json()
    assert scoped["total"] == full["total"] - hidden
    assert sum(scoped["types"].values()) == scoped["total"]
    assert "secret/_index" in {r["id"] for r in full["roots"]}
    sales = post(station, "sales", "coverage", {}).json()
    assert [r["id"] for r in sales["roots"]] == ["sales/_index"]
    assert sales["total"] == sales["roots"][0]["nodes"] and sales["system"] == 0
    whole = post(station, "all", "calendar", {"granularity": "year"}).json()
    mine = post(station, "deny", "calendar", {"granularity": "year"}).json()
    assert (
        mine["range"]["nodes"] + mine["undated"]
        == whole["range"]["nodes"] + whole["undated"] - hidden
    )
    only = post(station, "sales", "calendar", {"granularity": "year"}).json()
    assert only["range"]["nodes"] + only["undated"] == sales["total"]
    pipeline = post(station, "sales", "calendar", {"scope": "sales", "granularity": "month"})
    for bucket in pipeline.json()["buckets"]:
        scan = post(
            station,
            "sales",
            "scan",
            {
                "parent_id": "sales",
                "recursive": True,
                "since": bucket["since"],
                "until": bucket["until"],
                "fields": ["id"],
            },
        )
        assert scan.json()["total"] == bucket["nodes"], bucket


def test_the_station_mcp_answers_the_same(station: dict[str, Any]) -> None:
    import anyio

    from .mcpkit import http_session

    async def calls() -> list[Any]:
        headers = {"Authorization": f"Bearer {station['deny']}"}
        async with http_session(station["url"] + "/mcp", headers=headers) as client:
            return [
                await client.call_tool(
                    "prune", {"forest": "acme", "id": "sales/exchange-policy", "force": True}
                ),
                await client.call_tool("coverage", {"forest": "acme"}),
                await client.call_tool("history", {"forest": "acme", "id": "_index"}),
            ]

    pruned, covered, history = anyio.run(calls)
    text = pruned.content[0].text
    assert pruned.is_error and json.loads(text)["error"]["code"] == "E_ANCHORED"
    hidden_nothing(text)
    assert json.loads(text)["error"]["out_of_scope"] == 1
    assert not covered.is_error and not history.is_error
    hidden_nothing(covered.content[0].text + history.content[0].text)
