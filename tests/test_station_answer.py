"""answer on the Station: a real Station on 127.0.0.1 and real HTTP clients, the model
a scripted OpenAI-compatible server on 127.0.0.1 (tests/modelkit.py).

The sweep and the walk, the answer store, provider failures (bounded, never cached),
scope (a hidden subtree never reaches the model), capabilities (the walk never
writes), bindings and the CLI, cost, the evidence floor, the trace and the audit row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from monkeyllm.heat import READ_DEPOSIT, STRONG_DEPOSIT
from monkeyllm.serve.station import audit, keys
from monkeyllm.serve.station.answer import bindings
from monkeyllm.serve.station.answer.cache import AnswerStore
from monkeyllm.serve.station.store import Store

from .forestkit import copy_sample, head, status
from .mcpkit import free_port
from .modelkit import ModelServer, Reply, tool
from .test_station import WORD, _key, _plant_secret, _serve, two_forests

QUESTION = "what is the deadline to exchange a retail order?"
CITED = "Retail returns close 30 days after the invoice date [sales/exchange-policy]."
SECRET_KEY_VALUE = "sk-test-SECRETVALUE-0123456789"


def _bind(root: Path, url: str, **extra: Any) -> bindings.Binding:
    with Store(root) as store:
        return bindings.put(store, bindings.Binding(forest="acme", endpoint=url,
                                                    model="kit-model", **extra))


@pytest.fixture(scope="module")
def st(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("answer")
    two_forests(root)
    made: dict[str, Any] = {
        "root": root,
        "ans": _key(root, "ans", caps="read,answer")[1],
        "deny": _key(root, "deny", deny=("secret/",), caps="read,answer,query")[1],
        "writer": _key(root, "writer", caps="read,query,write,tend,answer")[1],
        "reader": _key(root, "reader", caps="read")[1],
        "other": _key(root, "o", forest="other", caps="read,answer")[1],
    }
    with ModelServer() as kit, _serve(root) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        made.update(kit=kit, client=client)
        _bind(root, kit.url, timeout_s=2.0)
        yield made


@pytest.fixture(autouse=True)
def _rebind(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts from the plain binding and an empty script."""
    yield
    if "st" in request.fixturenames:
        made = request.getfixturevalue("st")
        _bind(made["root"], made["kit"].url, timeout_s=2.0)
        made["kit"].reply()


def ask(st: dict[str, Any], body: dict[str, Any], key: str = "ans",
        forest: str = "acme") -> httpx.Response:
    return st["client"].post(f"/v1/forests/{forest}/answer", json=body,
                             headers={"Authorization": f"Bearer {st[key]}"})


def _store_count(st: dict[str, Any]) -> int:
    with AnswerStore(st["root"] / "acme") as store:
        return store.count()


# -- the sweep -------------------------------------------------------------------------


def test_sweep(st: dict[str, Any]) -> None:
    st["kit"].reply(CITED)
    got = ask(st, {"question": QUESTION, "k": 3, "cache": False})
    assert got.status_code == 200, got.text
    out = got.json()
    assert out["answer"] == CITED and out["model"] == "kit-model"
    assert out["usage"] == {"prompt": 100, "completion": 20, "calls": 1}
    assert out["evidence"] == ["sales/exchange-policy"]
    assert out["sources"][0]["id"] == "sales/exchange-policy"
    assert set(out["sources"][0]) >= {"id", "title", "summary", "type"}
    assert "sales/exchange-policy" in [r["id"] for r in out["harvest"]["results"]]
    assert out["model_ms"] > 0 and out["reply_tokens"] == 600
    assert out["cost"] == {"prompt_tokens": 100, "completion_tokens": 20, "calls": 1,
                           "priced": False}
    steps = out["trace"]["steps"]
    assert [s["step"] for s in steps[:2]] == ["locate", "sniff"]
    picks = [s for s in steps if s["step"] == "pick"]
    assert {s["id"] for s in picks} == {r["id"] for r in out["harvest"]["results"]}
    assert all(s["ms"] >= 0 and s["tokens"] > 0 for s in steps[:-1])
    assert steps[-1] == {"step": "model", "ms": out["model_ms"], "detail": "kit-model"}
    assert out["trace"]["total_ms"] >= out["trace"]["retrieval_ms"] + out["model_ms"] - 1
    (sent,) = st["kit"].requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "kit-model" and sent.body["temperature"] == 0.1
    assert sent.body["max_tokens"] == 600 and "authorization" not in sent.headers
    system, user = sent.body["messages"]
    assert system["role"] == "system" and "[sales/exchange-policy]" in system["content"]
    assert QUESTION in user["content"] and '"sales/exchange-policy"' in user["content"]


def test_evidence_falls_back_to_every_result_with_content(st: dict[str, Any]) -> None:
    st["kit"].reply("Thirty days, per the policy [no/such-node].")
    out = ask(st, {"question": QUESTION, "cache": False}).json()
    assert out["evidence"] == [r["id"] for r in out["harvest"]["results"] if r["content"]]


def test_reply_tokens_bounded_sent_and_echoed(st: dict[str, Any]) -> None:
    for given in (10, 99999):
        refused = ask(st, {"question": QUESTION, "reply_tokens": given, "cache": False})
        assert refused.status_code == 400, refused.text
        assert "from 64 to 4000" in refused.json()["error"]["message"]
    for given, sent in ((64, 64), (300, 300), (4000, 4000)):
        st["kit"].reply(CITED)
        out = ask(st, {"question": QUESTION, "reply_tokens": given, "cache": False}).json()
        assert out["reply_tokens"] == sent
        body = st["kit"].requests[0].body
        assert body["max_tokens"] == sent
        assert f"under {sent} tokens" in body["messages"][0]["content"]


def test_cost_priced_with_rates(st: dict[str, Any]) -> None:
    _bind(st["root"], st["kit"].url, price_prompt=1.0, price_completion=2.0)
    st["kit"].reply(Reply(CITED, prompt_tokens=3000, completion_tokens=500))
    cost = ask(st, {"question": QUESTION, "cache": False}).json()["cost"]
    assert cost["priced"] is True and cost["calls"] == 1
    assert cost["usd"] == pytest.approx(3000 / 1e6 + 500 * 2 / 1e6)
    assert cost["prompt_tokens"] == 3000 and cost["completion_tokens"] == 500


def test_min_evidence_floor_skips_the_model(st: dict[str, Any]) -> None:
    st["kit"].reply(CITED)
    out = ask(st, {"question": QUESTION, "min_evidence": 2, "min_score": 1.0}).json()
    assert out["answer"] is None and out["reason"] == "insufficient_evidence"
    assert out["evidence_count"] == 0 and out["min_evidence"] == 2
    assert out["min_score"] == 1.0 and "results" in out["harvest"]
    assert "cost" not in out and st["kit"].requests == []
    clamped = ask(st, {"question": QUESTION, "k": 1, "min_evidence": 3,
                       "min_score": 1.0}).json()
    assert clamped["min_evidence"] == 1
    refused = ask(st, {"question": QUESTION, "min_evidence": 9})
    assert refused.status_code == 400 and "from 0 to 5" in refused.json()["error"]["message"]
    ok = ask(st, {"question": QUESTION, "min_evidence": 1, "cache": False})
    assert ok.json()["answer"] == CITED and len(st["kit"].requests) == 1


def test_bad_arguments(st: dict[str, Any]) -> None:
    for body in ({}, {"question": 3}, {"question": QUESTION, "nope": 1},
                 {"question": QUESTION, "hops": 0}, {"question": QUESTION, "hops": 17},
                 {"question": QUESTION, "hops": "x"}, {"question": "  "},
                 {"question": QUESTION, "k": True}, {"question": "x" * 1001}):
        got = ask(st, body)
        assert got.status_code == 400 and got.json()["error"]["code"] == "E_SCHEMA", body
    assert st["kit"].requests == []
    st["kit"].reply(CITED)
    legacy = ask(st, {"query": QUESTION, "cache": False})
    assert legacy.status_code == 200 and legacy.json()["answer"] == CITED


# -- the answer store ------------------------------------------------------------------


def test_cache_hit_invalidation_and_refresh(st: dict[str, Any]) -> None:
    question = "which document sets the exchange window for retail orders?"
    st["kit"].reply(CITED)
    first = ask(st, {"question": question}).json()
    assert "cached" not in first and len(st["kit"].requests) == 1
    again = ask(st, {"question": "  Which document sets the EXCHANGE window for retail "
                                 "orders? "})
    hit = again.json()
    assert hit["cached"] is True and hit["cached_at"].endswith("Z")
    assert hit["answer"] == first["answer"] and hit["evidence"] == first["evidence"]
    assert "cost" not in hit and all(s["step"] != "model" for s in hit["trace"]["steps"])
    assert len(st["kit"].requests) == 1  # the model was not called
    # Another principal (another scope) never shares the entry.
    st["kit"].reply(CITED)
    assert "cached" not in ask(st, {"question": question}, key="deny").json()
    assert len(st["kit"].requests) == 1
    # A graft that changes the evidence makes a miss.
    patch = {"id": "sales/exchange-policy", "patch": {"set_frontmatter": {
        "summary": "Return and exchange windows per channel, revised for the store."}}}
    grafted = st["client"].post("/v1/forests/acme/graft", json=patch,
                                headers={"Authorization": f"Bearer {st['writer']}"})
    assert grafted.status_code == 200, grafted.text
    st["kit"].reply("Changed: 45 days [sales/exchange-policy].")
    miss = ask(st, {"question": question}).json()
    assert "cached" not in miss and miss["answer"].startswith("Changed")
    assert ask(st, {"question": question}).json()["answer"].startswith("Changed")
    # cache: false runs fresh and replaces the entry.
    st["kit"].reply("Fresh: 45 days [sales/exchange-policy].")
    fresh = ask(st, {"question": question, "cache": False}).json()
    assert "cached" not in fresh and len(st["kit"].requests) == 1
    replaced = ask(st, {"question": question}).json()
    assert replaced["cached"] is True and replaced["answer"].startswith("Fresh")


def test_unsound_answers_are_never_stored(st: dict[str, Any]) -> None:
    question = "how long is the exchange deadline for a retail order, exactly?"
    for reply in (Reply("Thirty days [sales/exchange-policy]", finish_reason="length"),
                  Reply("   ")):
        st["kit"].reply(reply)
        before = _store_count(st)
        out = ask(st, {"question": question}).json()
        assert "cached" not in out and _store_count(st) == before
    assert ask(st, {"question": question}).json()["answer"] == \
        "I do not know from this forest."  # the default reply: the model ran again


# -- provider failures -----------------------------------------------------------------


@pytest.mark.parametrize(("reply", "status", "code", "words"), [
    (Reply(status=500, body={"error": {"message": f"boom {SECRET_KEY_VALUE}"}}), 502,
     "E_PROVIDER", "HTTP 500"),
    (Reply(body=b"<html>not json"), 502, "E_PROVIDER", "not JSON"),
    (Reply(body={"choices": []}), 502, "E_PROVIDER", "no choices"),
    (Reply("late", sleep=3.5), 504, "E_TIMEOUT", "within 1 s"),
])
def test_provider_failures_are_bounded_envelopes(st: dict[str, Any], reply: Reply,
                                                 status: int, code: str, words: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIT_KEY", SECRET_KEY_VALUE)
    _bind(st["root"], st["kit"].url, api_key_env="KIT_KEY", timeout_s=1.0)
    question = f"what does the exchange policy say about {code.lower()} {status}?"
    before = _store_count(st)
    for _ in range(2):  # nothing cached: the second call reaches the provider again
        st["kit"].reply(reply)
        started = time.monotonic()
        got = ask(st, {"question": question})
        assert time.monotonic() - started < 3.0
        assert got.status_code == status, got.text
        error = got.json()["error"]
        assert error["code"] == code and words in error["message"]
        assert "vine station bind" in error["hint"]
        assert SECRET_KEY_VALUE not in got.text
        assert len(st["kit"].requests) == 1
        assert st["kit"].requests[0].headers["authorization"] == f"Bearer {SECRET_KEY_VALUE}"
    assert _store_count(st) == before


def test_connection_refused_and_unset_key(st: dict[str, Any]) -> None:
    _bind(st["root"], f"http://127.0.0.1:{free_port()}/v1")
    got = ask(st, {"question": QUESTION})
    assert got.status_code == 502 and got.json()["error"]["code"] == "E_PROVIDER"
    assert "could not reach" in got.json()["error"]["message"]
    _bind(st["root"], st["kit"].url, api_key_env="KIT_KEY_NEVER_SET_ANYWHERE")
    # (not from the answer store: an earlier test may have left this question's answer)
    got = ask(st, {"question": QUESTION, "cache": False})
    assert got.status_code == 502 and "KIT_KEY_NEVER_SET_ANYWHERE" in got.text
    assert st["kit"].requests == []


def test_walk_provider_failure_midway(st: dict[str, Any]) -> None:
    st["kit"].reply(tool("look", id="sales/exchange-policy"), Reply(status=500))
    got = ask(st, {"question": "walk then fail", "hops": 4})
    assert got.status_code == 502 and got.json()["error"]["code"] == "E_PROVIDER"


# -- no model, capabilities, audit -----------------------------------------------------


def test_no_model_bound(st: dict[str, Any]) -> None:
    got = ask(st, {"question": QUESTION}, key="other", forest="other")
    assert got.status_code == 400
    error = got.json()["error"]
    assert error["code"] == "E_SCHEMA" and "vine station bind other" in error["hint"]


def test_answer_needs_its_capability_and_is_audited(st: dict[str, Any]) -> None:
    got = ask(st, {"question": QUESTION}, key="reader")
    assert got.status_code == 403 and got.json()["error"]["code"] == "E_FORBIDDEN"
    st["kit"].reply(CITED)
    assert ask(st, {"question": QUESTION, "cache": False}).status_code == 200
    rows = audit.rows(Store(st["root"]), limit=5)
    assert rows[0]["call"] == "answer" and rows[0]["principal"] == "ans"
    assert rows[0]["outcome"] == "ok" and rows[0]["forest"] == "acme"
    assert rows[1]["outcome"] == "E_FORBIDDEN" and rows[1]["principal"] == "reader"
    assert len(st["kit"].requests) == 1


def test_the_walk_never_writes(st: dict[str, Any]) -> None:
    acme = st["root"] / "acme"
    before, clean = head(acme), status(acme)
    note = {"id": "sales/walk-note", "type": "note", "parent": "sales/_index",
            "title": "Walk note", "summary": "A note the walk must never plant here."}
    st["kit"].reply(
        tool("plant", node=note),
        tool("graft", id="sales/price-list", patch={"set_frontmatter": {"title": "X"}}),
        tool("tend", id="sales/orders-2026", sql="DELETE FROM orders"),
        tool("answer", text="I cannot write; the policy is 30 days.", answer_nodes=[]))
    out = ask(st, {"question": "plant a note, then answer", "hops": 6},
              key="writer").json()
    assert [h["tool"] for h in out["hops"]] == ["plant", "graft", "tend", "answer"]
    assert [h["ok"] for h in out["hops"][:3]] == [False] * 3
    assert all(h["out"] == "refused: not a read tool" for h in out["hops"][:3])
    nudge = st["kit"].requests[1].body["messages"][-1]["content"]
    assert "'plant' is not available" in nudge and "only reads" in nudge
    assert head(acme) == before and status(acme) == clean
    assert not (acme / "sales" / "walk-note.md").exists()
    assert out["evidence"] == [] and "commit" not in out


def test_walk_query_needs_the_query_capability(st: dict[str, Any]) -> None:
    sql = "SELECT COUNT(*) AS n FROM orders"
    st["kit"].reply(tool("query", id="sales/orders-2026", sql=sql),
                    tool("answer", text="Unknown.", answer_nodes=[]))
    out = ask(st, {"question": "how many orders closed in 2026?", "hops": 3}).json()
    assert out["hops"][0]["tool"] == "query" and out["hops"][0]["ok"] is False
    assert out["hops"][0]["out"] == "error E_FORBIDDEN"
    fed = st["kit"].requests[1].body["messages"][-1]["content"]
    assert "E_FORBIDDEN" in fed and "'query' capability" in fed


# -- the walk --------------------------------------------------------------------------


def test_walk_look_query_answer(st: dict[str, Any]) -> None:
    sql = "SELECT COUNT(*) AS n FROM orders"
    st["kit"].reply(
        "Let me look first.\n```json\n" + tool("look", id="sales/orders-2026") + "\n```",
        tool("query", id="sales/orders-2026", sql=sql),
        "Done: " + tool("answer", text="1545 orders closed in 2026 [sales/orders-2026].",
                        answer_nodes=["sales/orders-2026"]))
    got = ask(st, {"question": "how many orders closed in 2026?", "hops": 5},
              key="writer")
    assert got.status_code == 200, got.text
    out = got.json()
    assert out["answer"].startswith("1545 orders") and out["turns"] == 3
    assert "exhausted" not in out
    assert [(h["n"], h["tool"], h["ok"]) for h in out["hops"]] == [
        (1, "look", True), (2, "query", True), (3, "answer", True)]
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
        sum(s["ms"] for s in models), abs=0.1)
    first, second, third = (r.body["messages"] for r in st["kit"].requests)
    assert "5 turns" in first[0]["content"] and "Entry locate" in first[1]["content"]
    entry = json.loads(first[1]["content"].split("(JSON):\n", 1)[1])
    orders = next(r for r in entry["results"] if r["id"] == "sales/orders-2026")
    assert orders["notes"]  # dataset notes ride on the entry locate
    assert second[-1]["content"].startswith("Result of look:")
    assert "1545" in third[-1]["content"]


def test_walk_nudges_repeats_unknown_tools_and_prose(st: dict[str, Any]) -> None:
    st["kit"].reply(tool("pick", id="sales/exchange-policy"),
                    tool("pick", id="sales/exchange-policy"),
                    "I think the answer is thirty days.",
                    tool("fly", to="moon"),
                    tool("answer", text="30 days [sales/exchange-policy].",
                         answer_nodes=["sales/exchange-policy", "people/_index"]))
    out = ask(st, {"question": "exchange deadline, walked", "hops": True}).json()
    assert [h["tool"] for h in out["hops"]] == ["pick", "pick", None, "fly", "answer"]
    assert [h["out"] for h in out["hops"][1:4]] == [
        "refused: repeated call", "no tool call", "refused: not a read tool"]
    assert out["turns"] == 5 and out["evidence"] == ["sales/exchange-policy"]
    assert "6 turns" in st["kit"].requests[0].body["messages"][0]["content"]
    assert "already made that exact call" in \
        st["kit"].requests[2].body["messages"][-1]["content"]


def test_walk_deadline_forces_an_answer(st: dict[str, Any]) -> None:
    st["kit"].reply(tool("locate", query="exchange policy", k=3),
                    tool("answer", text="30 days [sales/exchange-policy].",
                         answer_nodes=[]))
    out = ask(st, {"question": "deadline walk", "hops": 2}).json()
    assert out["answer"] == "30 days [sales/exchange-policy]." and out["turns"] == 2
    assert out["evidence"] == []  # a locate opens nothing
    last = st["kit"].requests[1].body["messages"][-1]["content"]
    assert "last turn" in last and last.startswith("Result of locate:")
    st["kit"].reply(tool("answer", text="From the entry: 30 days.", answer_nodes=[]))
    one = ask(st, {"question": "deadline walk in one", "hops": 1}).json()
    assert one["turns"] == 1 and "last turn" in \
        st["kit"].requests[0].body["messages"][1]["content"]


def test_walk_exhaustion_is_empty_never_made_up(st: dict[str, Any]) -> None:
    question = "an exhausting walk about exchange"
    for _ in range(2):  # nothing stored: the second walk runs again
        st["kit"].reply(tool("look", id="sales/exchange-policy"),
                        tool("pick", id="sales/exchange-policy"))
        out = ask(st, {"question": question, "hops": 2}).json()
        assert out["exhausted"] is True and out["answer"] == ""
        assert out["evidence"] == [] and out["sources"] == [] and out["turns"] == 2
        assert out["hops"][1]["out"] == "refused: the deadline turn needs an answer"
        assert len(st["kit"].requests) == 2


def test_walk_cache_until_head_moves(st: dict[str, Any]) -> None:
    question = "cached walk over the price list"
    answer = tool("answer", text="See the list [sales/price-list].",
                  answer_nodes=["sales/price-list"])
    st["kit"].reply(tool("look", id="sales/price-list"), answer)
    first = ask(st, {"question": question, "hops": 3}).json()
    assert first["evidence"] == ["sales/price-list"] and "cached" not in first
    hit = ask(st, {"question": question, "hops": 3}).json()
    assert hit["cached"] is True and hit["answer"] == first["answer"]
    assert len(st["kit"].requests) == 2
    grafted = st["client"].post("/v1/forests/acme/graft", json={
        "id": "sales/price-list", "patch": {"set_frontmatter": {"title": "Price list 2"}}},
        headers={"Authorization": f"Bearer {st['writer']}"})
    assert grafted.status_code == 200, grafted.text
    st["kit"].reply(tool("look", id="sales/price-list"), answer)
    assert "cached" not in ask(st, {"question": question, "hops": 3}).json()


# -- scope -----------------------------------------------------------------------------


def test_a_hidden_subtree_never_reaches_the_model(st: dict[str, Any]) -> None:
    question = "exchange deadline retail order NF-4412 plan"
    st["kit"].reply(CITED)
    sweep = ask(st, {"question": question, "k": 5, "cache": False}, key="deny")
    assert sweep.status_code == 200, sweep.text
    st["kit"].reply(tool("sniff", terms=["NF-4412"], k=10),
                    tool("look", id="secret/plan"),
                    tool("pick", id=["secret/plan", "sales/exchange-policy"]),
                    tool("move", id="sales/exchange-policy", direction="both"),
                    tool("scan", parent_id="_index", recursive=True, limit=50),
                    tool("answer", text="30 days [sales/exchange-policy].",
                         answer_nodes=["secret/plan", "sales/exchange-policy"]))
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


# -- Station harvest's trace, bindings and the CLI -------------------------------------


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
        assert traced == plain
        assert [s["step"] for s in steps] == ["locate", "sniff"] + ["pick"] * len(
            plain["results"])
        assert [s["id"] for s in steps[2:]] == [r["id"] for r in plain["results"]]
        scoped = trace_harvest(station, who, "acme", dict(args))
        assert "secret/" not in json.dumps(scoped)
        assert [s["id"] for s in scoped["trace"]["steps"] if "id" in s] == \
            [r["id"] for r in scoped["results"]]
        assert scoped["trace"]["retrieval_ms"] >= \
            sum(s["ms"] for s in scoped["trace"]["steps"]) - 0.1
        assert trace_harvest(station, who, "acme", {"query": ""})["error"]["code"] == \
            "E_SCHEMA"
    finally:
        station.close()


def test_bindings_roundtrip(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        assert bindings.get(store, "acme") is None
        made = bindings.put(store, bindings.Binding("acme", "http://h/v1/", "m"))
        assert made.endpoint == "http://h/v1" and bindings.get(store, "acme") == made
        for bad in (bindings.Binding("acme", "ftp://h", "m"),
                    bindings.Binding("acme", "http://h", "m", price_prompt=1.0),
                    bindings.Binding(".x", "http://h", "m"),
                    bindings.Binding("acme", "http://h", "m", timeout_s=0)):
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
    bound = runner.invoke(app, ["station", "bind", "acme", "--root", root, "--endpoint",
                                "http://127.0.0.1:11434/v1", "--model", "qwen3:14b",
                                "--api-key-env", "ACME_KEY", "--price-prompt", "0.5",
                                "--price-completion", "1.5", "--max-tokens", "800",
                                "--timeout", "30"])
    assert bound.exit_code == 0, bound.output
    shown = json.loads(bound.stdout)
    assert shown["model"] == "qwen3:14b" and shown["api_key_env"] == "ACME_KEY"
    assert shown["max_tokens"] == 800 and shown["timeout_s"] == 30.0
    assert SECRET_KEY_VALUE not in bound.output
    listed = runner.invoke(app, ["station", "bindings", "--root", root])
    assert listed.exit_code == 0 and SECRET_KEY_VALUE not in listed.output
    assert [json.loads(line)["forest"] for line in listed.stdout.splitlines()] == ["acme"]
    half = runner.invoke(app, ["station", "bind", "acme", "--root", root, "--endpoint",
                               "http://h/v1", "--model", "m", "--price-prompt", "1"])
    assert half.exit_code == 2 and "both rates" in half.output
    assert runner.invoke(app, ["station", "unbind", "acme", "--root", root]).exit_code == 0
    assert runner.invoke(app, ["station", "unbind", "acme", "--root", root]).exit_code == 1
    assert runner.invoke(app, ["station", "bindings", "--root", root]).stdout == ""
    for command in ("bind", "unbind", "bindings"):
        helped = runner.invoke(app, ["station", command, "--help"])
        assert helped.exit_code == 0
        assert any(line.strip().startswith(f"Example: vine station {command} ")
                   for line in helped.stdout.splitlines()), helped.stdout


def test_rest_harvest_traces_and_answer_times_and_audits_its_cache(
        st: dict[str, Any]) -> None:
    got = st["client"].post("/v1/forests/acme/harvest", json={"query": QUESTION, "k": 2},
                            headers={"Authorization": f"Bearer {st['ans']}"})
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
        got = st["client"].post("/v1/forests/acme/harvest", headers=auth,
                                json={"query": question, "k": 3})
        return [r["id"] for r in got.json()["results"]]

    def heat(node_id: str) -> float:
        got = st["client"].post("/v1/forests/acme/look", headers=auth, json={
            "id": node_id, "fields": ["stats"]})
        return float(got.json()["stats"]["heat"])

    node = harvest()[0]
    before = heat(node)                # each look deposits a read's heat after it reports
    harvest()
    by_harvest = heat(node) - before
    st["kit"].reply(f"See [{node}].")
    assert ask(st, {"question": question, "cache": False}).json()["evidence"] == [node]
    by_answer = heat(node) - before - by_harvest
    assert heat(node) < 0.9                                # far from the cap
    assert by_harvest > READ_DEPOSIT
    assert by_answer - by_harvest == pytest.approx(STRONG_DEPOSIT, abs=0.005)
