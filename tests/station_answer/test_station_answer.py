"""answer on the Station: a real Station on 127.0.0.1 and real HTTP clients, the model
a scripted OpenAI-compatible server on 127.0.0.1 (tests/modelkit.py).

The sweep and the walk, the answer store, provider failures (bounded, never cached),
scope (a hidden subtree never reaches the model), capabilities (the walk never
writes), bindings and the CLI, cost, the evidence floor, the trace and the audit row.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from monkeyllm.serve.station import audit
from monkeyllm.serve.station.answer.cache import AnswerStore
from monkeyllm.serve.station.store import Store

from ..forestkit import head, node, status
from ..mcpkit import free_port
from ..modelkit import Reply, tool
from .kit import CITED, QUESTION, SECRET_KEY_VALUE, _bind, ask


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
    assert out["cost"] == {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "calls": 1,
        "priced": False,
    }
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
    clamped = ask(st, {"question": QUESTION, "k": 1, "min_evidence": 3, "min_score": 1.0}).json()
    assert clamped["min_evidence"] == 1
    refused = ask(st, {"question": QUESTION, "min_evidence": 9})
    assert refused.status_code == 400 and "from 0 to 5" in refused.json()["error"]["message"]
    ok = ask(st, {"question": QUESTION, "min_evidence": 1, "cache": False})
    assert ok.json()["answer"] == CITED and len(st["kit"].requests) == 1


def test_bad_arguments(st: dict[str, Any]) -> None:
    for body in (
        {},
        {"question": 3},
        {"question": QUESTION, "nope": 1},
        {"question": QUESTION, "hops": 0},
        {"question": QUESTION, "hops": 17},
        {"question": QUESTION, "hops": "x"},
        {"question": "  "},
        {"question": QUESTION, "k": True},
        {"question": "x" * 1001},
    ):
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
    again = ask(st, {"question": "  Which document sets the EXCHANGE window for retail orders? "})
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
    patch = {
        "id": "sales/exchange-policy",
        "patch": {
            "set_frontmatter": {
                "summary": "Return and exchange windows per channel, revised for the store."
            }
        },
    }
    grafted = st["client"].post(
        "/v1/forests/acme/graft", json=patch, headers={"Authorization": f"Bearer {st['writer']}"}
    )
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
    for reply in (
        Reply("Thirty days [sales/exchange-policy]", finish_reason="length"),
        Reply("   "),
    ):
        st["kit"].reply(reply)
        before = _store_count(st)
        out = ask(st, {"question": question}).json()
        assert "cached" not in out and _store_count(st) == before
    assert (
        ask(st, {"question": question}).json()["answer"] == "I do not know from this forest."
    )  # the default reply: the model ran again


# -- provider failures -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "code", "words"),
    [
        (
            Reply(status=500, body={"error": {"message": f"boom {SECRET_KEY_VALUE}"}}),
            502,
            "E_PROVIDER",
            "HTTP 500",
        ),
        (Reply(body=b"<html>not json"), 502, "E_PROVIDER", "not JSON"),
        (Reply(body={"choices": []}), 502, "E_PROVIDER", "no choices"),
        (Reply("late", sleep=3.5), 504, "E_TIMEOUT", "within 1 s"),
    ],
)
def test_provider_failures_are_bounded_envelopes(
    st: dict[str, Any],
    reply: Reply,
    status: int,
    code: str,
    words: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
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
    note = node(
        "sales/walk-note", "sales/_index", "Walk note", "A note the walk must never plant here."
    )
    st["kit"].reply(
        tool("plant", node=note),
        tool("graft", id="sales/price-list", patch={"set_frontmatter": {"title": "X"}}),
        tool("tend", id="sales/orders-2026", sql="DELETE FROM orders"),
        tool("answer", text="I cannot write; the policy is 30 days.", answer_nodes=[]),
    )
    out = ask(st, {"question": "plant a note, then answer", "hops": 6}, key="writer").json()
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
    st["kit"].reply(
        tool("query", id="sales/orders-2026", sql=sql),
        tool("answer", text="Unknown.", answer_nodes=[]),
    )
    out = ask(st, {"question": "how many orders closed in 2026?", "hops": 3}).json()
    assert out["hops"][0]["tool"] == "query" and out["hops"][0]["ok"] is False
    assert out["hops"][0]["out"] == "error E_FORBIDDEN"
    fed = st["kit"].requests[1].body["messages"][-1]["content"]
    assert "E_FORBIDDEN" in fed and "'query' capability" in fed


def test_a_reply_cut_in_the_middle_of_an_emoji_is_answered(st: dict[str, Any]) -> None:
    """A provider's JSON can escape half a surrogate pair (a reply cut inside an emoji):
    the answer carries U+FFFD for it, and a provider error's own words likewise, instead
    of an E_INTERNAL (the answer store could not hold it) or a reply no one can encode."""
    cut = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": CITED + " Done \ud83d"},
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }
    st["kit"].reply(Reply(body=json.dumps(cut).encode()))  # json.dumps escapes it
    got = ask(st, {"question": QUESTION + " (cut)", "cache": False})
    assert got.status_code == 200, got.text
    assert got.json()["answer"].endswith("Done \ufffd")
    assert got.json()["evidence"] == ["sales/exchange-policy"]
    failed = {"error": {"message": "overloaded \udc00 try later"}}
    st["kit"].reply(Reply(status=503, body=json.dumps(failed).encode()))
    got = ask(st, {"question": QUESTION + " (failed)", "cache": False})
    assert (
        got.status_code == 502 and "overloaded \ufffd try later" in got.json()["error"]["message"]
    )
