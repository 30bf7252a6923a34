"""The Station's answer: the walk through the forest, what a scoped key may see of it, and
harvest's trace, bindings and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from monkeyllm.heat import READ_DEPOSIT, STRONG_DEPOSIT
from monkeyllm.serve.station import audit, keys
from monkeyllm.serve.station.answer import bindings
from monkeyllm.serve.station.store import Store

from ..forestkit import copy_sample
from ..modelkit import tool
from ..test_station import WORD, _plant_secret
from .kit import CITED, QUESTION, SECRET_KEY_VALUE, ask


def test_walk_look_query_answer(st: dict[str, Any]) -> None:
    sql = "SELECT COUNT(*) AS n FROM orders"
    st["kit"].reply(
        "Let me look first.\n```json\n" + tool("look", id="sales/orders-2026") + "\n```",
        tool("query", id="sales/orders-2026", sql=sql),
        "Done: "
        + tool(
            "answer",
            text="1545 orders closed in 2026 [sales/orders-2026].",
            answer_nodes=["sales/orders-2026"],
        ),
    )
    got = ask(st, {"question": "how many orders closed in 2026?", "hops": 5}, key="writer")
    assert got.status_code == 200, got.text
    out = got.json()
    assert out["answer"].startswith("1545 orders") and out["turns"] == 3
    assert "exhausted" not in out
    assert [(h["n"], h["tool"], h["ok"]) for h in out["hops"]] == [
        (1, "look", True),
        (2, "query", True),
        (3, "answer", True),
    ]
    assert out["hops"][0]["id"] == "sales/orders-2026"
    assert out["hops"][0]["out"] == "dataset digest" and out["hops"][1]["out"] == "1 rows"
    assert all(h["model_ms"] > 0 for h in out["hops"]) and out["hops"][1]["ms"] > 0
    assert [r["tool"] for r in out["read"]] == ["look", "query"]
    assert "1545" in json.dumps(out["read"][1]["result"])
    assert out["evidence"] == ["sales/orders-2026"]
    assert out["sources"][0]["id"] == "sales/orders-2026"
    assert out["usage"] == {"prompt": 300, "completion": 60, "calls": 3}
    assert out["cost"]["calls"] == 3 and out["cost"]["priced"] is False
    models = [s for s in out["trace"]["steps"] if s["step"] == "model"]
    assert [s["hop"] for s in models] == [1, 2, 3]
    assert out["trace"]["retrieval_ms"] > 0 and out["model_ms"] == pytest.approx(
        sum(s["ms"] for s in models), abs=0.1
    )
    first, second, third = (r.body["messages"] for r in st["kit"].requests)
    assert "5 turns" in first[0]["content"] and "Entry locate" in first[1]["content"]
    entry = json.loads(first[1]["content"].split("(JSON):\n", 1)[1])
    orders = next(r for r in entry["results"] if r["id"] == "sales/orders-2026")
    assert orders["notes"]  # dataset notes ride on the entry locate
    assert second[-1]["content"].startswith("Result of look:")
    assert "1545" in third[-1]["content"]


def test_walk_nudges_repeats_unknown_tools_and_prose(st: dict[str, Any]) -> None:
    st["kit"].reply(
        tool("pick", id="sales/exchange-policy"),
        tool("pick", id="sales/exchange-policy"),
        "I think the answer is thirty days.",
        tool("fly", to="moon"),
        tool(
            "answer",
            text="30 days [sales/exchange-policy].",
            answer_nodes=["sales/exchange-policy", "people/_index"],
        ),
    )
    out = ask(st, {"question": "exchange deadline, walked", "hops": True}).json()
    assert [h["tool"] for h in out["hops"]] == ["pick", "pick", None, "fly", "answer"]
    assert [h["out"] for h in out["hops"][1:4]] == [
        "refused: repeated call",
        "no tool call",
        "refused: not a read tool",
    ]
    assert out["turns"] == 5 and out["evidence"] == ["sales/exchange-policy"]
    assert "6 turns" in st["kit"].requests[0].body["messages"][0]["content"]
    assert "already made that exact call" in st["kit"].requests[2].body["messages"][-1]["content"]


def test_walk_deadline_forces_an_answer(st: dict[str, Any]) -> None:
    st["kit"].reply(
        tool("locate", query="exchange policy", k=3),
        tool("answer", text="30 days [sales/exchange-policy].", answer_nodes=[]),
    )
    out = ask(st, {"question": "deadline walk", "hops": 2}).json()
    assert out["answer"] == "30 days [sales/exchange-policy]." and out["turns"] == 2
    assert out["evidence"] == []  # a locate opens nothing
    last = st["kit"].requests[1].body["messages"][-1]["content"]
    assert "last turn" in last and last.startswith("Result of locate:")
    st["kit"].reply(tool("answer", text="From the entry: 30 days.", answer_nodes=[]))
    one = ask(st, {"question": "deadline walk in one", "hops": 1}).json()
    assert one["turns"] == 1 and "last turn" in st["kit"].requests[0].body["messages"][1]["content"]


def test_walk_exhaustion_is_empty_never_made_up(st: dict[str, Any]) -> None:
    question = "an exhausting walk about exchange"
    for _ in range(2):  # nothing stored: the second walk runs again
        st["kit"].reply(
            tool("look", id="sales/exchange-policy"), tool("pick", id="sales/exchange-policy")
        )
        out = ask(st, {"question": question, "hops": 2}).json()
        assert out["exhausted"] is True and out["answer"] == ""
        assert out["evidence"] == [] and out["sources"] == [] and out["turns"] == 2
        assert out["hops"][1]["out"] == "refused: the deadline turn needs an answer"
        assert len(st["kit"].requests) == 2


def test_walk_cache_until_head_moves(st: dict[str, Any]) -> None:
    question = "cached walk over the price list"
    answer = tool(
        "answer", text="See the list [sales/price-list].", answer_nodes=["sales/price-list"]
    )
    st["kit"].reply(tool("look", id="sales/price-list"), answer)
    first = ask(st, {"question": question, "hops": 3}).json()
    assert first["evidence"] == ["sales/price-list"] and "cached" not in first
    hit = ask(st, {"question": question, "hops": 3}).json()
    assert hit["cached"] is True and hit["answer"] == first["answer"]
    assert len(st["kit"].requests) == 2
    grafted = st["client"].post(
        "/v1/forests/acme/graft",
        json={"id": "sales/price-list", "patch": {"set_frontmatter": {"title": "Price list 2"}}},
        headers={"Authorization": f"Bearer {st['writer']}"},
    )
    assert grafted.status_code == 200, grafted.text
    st["kit"].reply(tool("look", id="sales/price-list"), answer)
    assert "cached" not in ask(st, {"question": question, "hops": 3}).json()


def test_a_hidden_subtree_never_reaches_the_model(st: dict[str, Any]) -> None:
    question = "exchange deadline retail order NF-4412 plan"
    st["kit"].reply(CITED)
    sweep = ask(st, {"question": question, "k": 5, "cache": False}, key="deny")
    assert sweep.status_code == 200, sweep.text
    st["kit"].reply(
        tool("sniff", terms=["NF-4412"], k=10),
        tool("look", id="secret/plan"),
        tool("pick", id=["secret/plan", "sales/exchange-policy"]),
        tool("move", id="sales/exchange-policy", direction="both"),
        tool("scan", parent_id="_index", recursive=True, limit=50),
        tool(
            "answer",
            text="30 days [sales/exchange-policy].",
            answer_nodes=["secret/plan", "sales/exchange-policy"],
        ),
    )
    walk = ask(st, {"question": question, "hops": 8, "cache": False}, key="deny")
    assert walk.status_code == 200, walk.text
    for text in (st["kit"].dumps(), sweep.text, walk.text):
        assert WORD not in text and WORD.lower() not in text
    out = walk.json()
    assert out["hops"][1]["out"] == "error E_NOT_FOUND"
    assert out["evidence"] == ["sales/exchange-policy"]
    assert "secret/" not in json.dumps(sweep.json()["harvest"])
    assert not any("secret/" in json.dumps(s) for s in sweep.json()["trace"]["steps"])
    # The unrestricted key does reach it (the probe is real).
    st["kit"].reply(CITED)
    ask(st, {"question": question, "k": 5, "cache": False}, key="writer")
    assert WORD in st["kit"].dumps()


def test_trace_harvest(tmp_path: Path) -> None:
    from monkeyllm.serve.station.answer import trace_harvest
    from monkeyllm.serve.station.app import Station

    root = tmp_path / "root"
    copy_sample(root / "acme", git=True)
    _plant_secret(root / "acme")
    with Store(root) as store:
        _, key = keys.add(store, "d", "acme", [], ["secret/"], frozenset({"read"}))
        _, whole = keys.add(store, "w", "acme", [], [], frozenset({"read"}))
        who, all_of = keys.verify(store, key), keys.verify(store, whole)
    station = Station(root)
    try:
        args = {"query": "exchange deadline retail order NF-4412", "k": 3}
        plain = station.dispatcher.run("harvest", {**args, "forest": "acme"}).result
        traced = station.call(all_of, "acme", "harvest", dict(args))
        steps = traced.pop("trace")["steps"]
        for out in (plain, traced):
            out.pop("elapsed_ms", None)
        # The first call's reads warm its results (heat), which may move the second's
        # scores in their last digit; everything else is the same.
        plain_scores = [r.pop("score") for r in plain["results"]]
        traced_scores = [r.pop("score") for r in traced["results"]]
        assert traced_scores == pytest.approx(plain_scores, abs=0.001)
        assert traced == plain
        assert [s["step"] for s in steps] == ["locate", "sniff"] + ["pick"] * len(plain["results"])
        assert [s["id"] for s in steps[2:]] == [r["id"] for r in plain["results"]]
        scoped = trace_harvest(station, who, "acme", dict(args))
        assert "secret/" not in json.dumps(scoped)
        assert [s["id"] for s in scoped["trace"]["steps"] if "id" in s] == [
            r["id"] for r in scoped["results"]
        ]
        assert (
            scoped["trace"]["retrieval_ms"] >= sum(s["ms"] for s in scoped["trace"]["steps"]) - 0.1
        )
        assert trace_harvest(station, who, "acme", {"query": ""})["error"]["code"] == "E_SCHEMA"
    finally:
        station.close()


def test_bindings_roundtrip(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        assert bindings.get(store, "acme") is None
        made = bindings.put(store, bindings.Binding("acme", "http://h/v1/", "m"))
        assert made.endpoint == "http://h/v1" and bindings.get(store, "acme") == made
        for bad in (
            bindings.Binding("acme", "ftp://h", "m"),
            bindings.Binding("acme", "http://h", "m", price_prompt=1.0),
            bindings.Binding(".x", "http://h", "m"),
            bindings.Binding("acme", "http://h", "m", timeout_s=0),
        ):
            with pytest.raises(ValueError):
                bindings.put(store, bad)
        assert [b.forest for b in bindings.listing(store)] == ["acme"]
        assert bindings.remove(store, "acme") and not bindings.remove(store, "acme")


def test_cli_bind_unbind_bindings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from monkeyllm.commands.app import make_app

    monkeypatch.setenv("ACME_KEY", SECRET_KEY_VALUE)
    app, runner = make_app(), CliRunner()
    root = str(tmp_path)

    def bind(endpoint: str, model: str, *more: str) -> Any:
        argv = ["station", "bind", "acme", "--root", root, "--endpoint", endpoint]
        return runner.invoke(app, [*argv, "--model", model, *more])

    bound = bind(
        "http://127.0.0.1:11434/v1",
        "qwen3:14b",
        "--api-key-env",
        "ACME_KEY",
        "--price-prompt",
        "0.5",
        "--price-completion",
        "1.5",
        "--max-tokens",
        "800",
        "--timeout",
        "30",
    )
    assert bound.exit_code == 0, bound.output
    shown = json.loads(bound.stdout)
    assert shown["model"] == "qwen3:14b" and shown["api_key_env"] == "ACME_KEY"
    assert shown["max_tokens"] == 800 and shown["timeout_s"] == 30.0
    assert SECRET_KEY_VALUE not in bound.output
    listed = runner.invoke(app, ["station", "bindings", "--root", root])
    assert listed.exit_code == 0 and SECRET_KEY_VALUE not in listed.output
    assert [json.loads(line)["forest"] for line in listed.stdout.splitlines()] == ["acme"]
    half = bind("http://h/v1", "m", "--price-prompt", "1")
    assert half.exit_code == 2 and "both rates" in half.output
    assert runner.invoke(app, ["station", "unbind", "acme", "--root", root]).exit_code == 0
    assert runner.invoke(app, ["station", "unbind", "acme", "--root", root]).exit_code == 1
    assert runner.invoke(app, ["station", "bindings", "--root", root]).stdout == ""
    for command in ("bind", "unbind", "bindings"):
        helped = runner.invoke(app, ["station", command, "--help"])
        assert helped.exit_code == 0
        assert any(
            line.strip().startswith(f"Example: vine station {command} ")
            for line in helped.stdout.splitlines()
        ), helped.stdout


def test_rest_harvest_traces_and_answer_times_and_audits_its_cache(st: dict[str, Any]) -> None:
    got = st["client"].post(
        "/v1/forests/acme/harvest",
        json={"query": QUESTION, "k": 2},
        headers={"Authorization": f"Bearer {st['ans']}"},
    )
    assert got.status_code == 200, got.text
    trace = got.json()["trace"]
    assert [s["step"] for s in trace["steps"][:2]] == ["locate", "sniff"]
    assert trace["total_ms"] >= trace["retrieval_ms"] > 0
    st["kit"].reply(CITED)
    fresh = ask(st, {"question": QUESTION, "k": 2, "cache": False})
    assert fresh.status_code == 200, fresh.text
    timing = fresh.headers["server-timing"]
    assert timing.startswith(f"model;dur={fresh.json()['model_ms']}, host;dur=")
    again = ask(st, {"question": QUESTION, "k": 2})
    assert again.json()["cached"] is True
    assert again.headers["server-timing"].startswith("host;dur=")
    rows = audit.rows(Store(st["root"]), limit=2)
    assert [r["outcome"] for r in rows] == ["cache", "ok"]
    assert len(st["kit"].requests) == 1


def test_what_an_answer_stands_on_gets_a_hunts_heat(st: dict[str, Any]) -> None:
    """An answer deposits a successful hunt's heat on its evidence, beyond what its
    harvest's own reads deposit (on a node the other tests leave cool)."""
    auth = {"Authorization": f"Bearer {st['ans']}"}
    question = "where is the carrier list with the average transit times?"

    def harvest() -> list[str]:
        got = st["client"].post(
            "/v1/forests/acme/harvest", headers=auth, json={"query": question, "k": 3}
        )
        return [r["id"] for r in got.json()["results"]]

    def heat(node_id: str) -> float:
        got = st["client"].post(
            "/v1/forests/acme/look", headers=auth, json={"id": node_id, "fields": ["stats"]}
        )
        return float(got.json()["stats"]["heat"])

    node = harvest()[0]
    before = heat(node)  # each look deposits a read's heat after it reports
    harvest()
    by_harvest = heat(node) - before
    st["kit"].reply(f"See [{node}].")
    assert ask(st, {"question": question, "cache": False}).json()["evidence"] == [node]
    by_answer = heat(node) - before - by_harvest
    assert heat(node) < 0.9  # far from the cap
    assert by_harvest > READ_DEPOSIT
    assert by_answer - by_harvest == pytest.approx(STRONG_DEPOSIT, abs=0.005)
