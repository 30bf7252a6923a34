"""The Station's MCP endpoint: a real Station on 127.0.0.1 (uvicorn in a thread) and the
SDK's real client over streamable HTTP, beside REST on the same server.

Every call answers over MCP what it answers over REST for the same key; keys, forests
and capabilities are enforced before and inside the SDK; a scoped key never sees the
hidden subtree in any tool result; the Host check refuses other names; calls are
audited and writes name their principal.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import monkeyllm
from monkeyllm.serve.station import audit
from monkeyllm.serve.station.calls import STATION_CALLS
from monkeyllm.serve.station.mcp import hosts_for
from monkeyllm.serve.station.policy import NEEDS
from monkeyllm.serve.station.store import Store

from .forestkit import git, node
from .mcpkit import (
    ACCEPT,
    ERAS,
    PING,
    TIMEOUT,
    VINE,
    CheckedSession,
    free_port,
    host_probes,
    http_session,
    payload,
    ping,
    stable,
    stop,
)
from .test_mcp import READS
from .test_station import PROBES, WORD, _serve, serving_station

NOTE = node(
    "sales/mcp-station-note",
    "sales/_index",
    "MCP station note",
    "Planted over the Station's MCP endpoint.",
)


def run(fn: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT * 2):
            return await fn(*args)

    return anyio.run(bounded)


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving_station(tmp_path_factory.mktemp("station-mcp"), ",answer") as made:
        yield made


def rest(
    st: dict[str, Any], key: str, call: str, args: dict[str, Any], forest: str = "acme"
) -> httpx.Response:
    return st["client"].post(
        f"/v1/forests/{forest}/{call}", json=args, headers={"Authorization": f"Bearer {st[key]}"}
    )


@contextlib.asynccontextmanager
async def session(
    st: dict[str, Any], key: str, header: str = "bearer", era: str = "handshake"
) -> AsyncIterator[CheckedSession]:
    """The SDK's client over streamable HTTP, sending one key."""
    headers = (
        {"Authorization": f"Bearer {st[key]}"} if header == "bearer" else {"X-API-Key": st[key]}
    )
    async with http_session(st["url"] + "/mcp", era, headers) as client:
        yield client


async def calls(
    st: dict[str, Any],
    key: str,
    todo: list[tuple[str, dict[str, Any]]],
    header: str = "bearer",
    era: str = "handshake",
) -> list[Any]:
    """The raw results of ``todo``'s tool calls, in one session."""
    async with session(st, key, header, era) as client:
        return [await client.call_tool(name, args) for name, args in todo]


def _bare(out: dict[str, Any]) -> Any:
    """A result without its timings (harvest's trace keeps the shape of its steps)."""
    bare = {k: v for k, v in out.items() if k not in ("elapsed_ms", "trace")}
    if "trace" in out:
        bare["trace"] = sorted((s["step"], s.get("id", "")) for s in out["trace"]["steps"])
    return stable(bare)


def test_tools_are_the_station_calls_and_forests(station: dict[str, Any]) -> None:
    async def body() -> tuple[Any, Any, Any]:
        async with session(station, "sales") as client:
            listed = (await client.list_tools()).tools
            forests = await client.call_tool("forests", {})
            bogus = await client.call_tool("forests", {"bogus": 1})
            return client.info, listed, (forests, bogus)  # type: ignore[attr-defined]

    info, listed, (forests, bogus) = run(body)
    names = [t.name for t in listed]
    # The sales key holds read, query and write: no tend, no answer.
    assert names == ["forests", *(n for n in STATION_CALLS if n not in ("tend", "answer"))]
    assert info.server_info.version == monkeyllm.__version__
    assert all(name in info.instructions for name in names)
    assert info.capabilities.prompts is None and info.capabilities.resources is None
    tools = {t.name: t for t in listed}
    assert tools["forests"].input_schema["properties"] == {}
    for name, call in STATION_CALLS.items():
        if name not in tools:
            continue
        schema = tools[name].input_schema
        own = call.input_schema()
        assert list(schema["properties"])[0] == "forest"
        assert schema["required"] == ["forest", *own["required"]]
        assert {k: v for k, v in schema["properties"].items() if k != "forest"} == own[
            "properties"
        ], name
        hints = tools[name].annotations
        assert hints.read_only_hint == call.read_only, name
        assert hints.open_world_hint == (name == "answer"), name
        if name in ("plant", "graft", "tend", "prune", "transplant", "answer"):
            assert hints.idempotent_hint is False, name
        if name in ("history", "calendar", "coverage"):
            assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
                True,
                False,
                True,
            ), name
    for name in ("graft", "prune", "transplant"):
        assert tools[name].annotations.destructive_hint is True, name
    assert tools["plant"].annotations.destructive_hint is False
    got = payload(forests)
    assert got == {
        "forests": [
            {
                "id": "acme",
                "caps": ["query", "read", "write"],
                "roots": ["sales/_index"],
                "locked": False,
            }
        ],
        "station": monkeyllm.__version__,
    }
    listed_rest = (
        station["client"]
        .get("/v1/forests", headers={"Authorization": f"Bearer {station['sales']}"})
        .json()
    )
    assert got["forests"] == listed_rest["forests"]
    assert payload(bogus)["error"]["code"] == "E_SCHEMA"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("who", ["all", "deny"])
def test_every_read_answers_what_rest_answers(station: dict[str, Any], who: str, era: str) -> None:
    todo = [(name, {"forest": "acme", **args}) for name, args in READS.items()]
    todo += [
        ("look", {"forest": "acme", "id": "no/such-node"}),
        ("look", {"forest": "acme", "id": 3}),
        ("query", {"forest": "acme", "id": "sales/orders-2026", "sql": "DELETE FROM orders"}),
    ]
    got = run(calls, station, who, todo, "bearer", era)
    for (name, args), result in zip(todo, got, strict=True):
        out = payload(result)
        expected = rest(station, who, name, {k: v for k, v in args.items() if k != "forest"})
        assert result.is_error == (expected.status_code != 200), (name, args)
        assert _bare(out) == _bare(expected.json()), (name, args)


def test_answer_is_a_tool_answering_like_rest(station: dict[str, Any]) -> None:
    args = {"question": "What is the deadline to exchange a retail order?"}
    got = run(calls, station, "all", [("answer", {"forest": "acme", **args})])[0]
    expected = rest(station, "all", "answer", args)
    out = payload(got)
    if "error" in out:  # no model bound to the forest here
        assert got.is_error and out == expected.json()
        from monkeyllm.serve.station import answer

        if hasattr(answer, "run"):  # once the answer package is in place
            assert 400 <= expected.status_code < 500, expected.text
    else:
        assert expected.status_code == 200
    denied = payload(run(calls, station, "reader", [("answer", {"forest": "acme", **args})])[0])
    assert denied["error"]["code"] == "E_FORBIDDEN"


def test_keys_missing_bad_revoked_and_x_api_key(station: dict[str, Any]) -> None:
    url = station["url"] + "/mcp"
    replies = {}
    for label, headers in (
        ("missing", {}),
        ("bad", {"Authorization": "Bearer mk_nope"}),
        ("revoked", {"Authorization": f"Bearer {station['revoked']}"}),
        ("bad-x", {"X-API-Key": "mk_nope"}),
    ):
        replies[label] = httpx.post(url, json=PING, headers={**ACCEPT, **headers}, timeout=TIMEOUT)
    rest_401 = station["client"].post("/v1/forests/acme/look", json={"id": "_index"})
    for label, reply in replies.items():
        assert reply.status_code == 401, label
        assert reply.json() == rest_401.json(), label
        assert reply.json()["error"]["code"] == "E_FORBIDDEN"
    ok = httpx.post(
        url, json=PING, headers={**ACCEPT, "X-API-Key": station["reader"]}, timeout=TIMEOUT
    )
    assert ok.status_code == 200 and ok.json()["result"]["serverInfo"]["version"]
    looked = run(
        calls,
        station,
        "reader",
        [("look", {"forest": "acme", "id": "sales/exchange-policy"})],
        "x-api-key",
    )[0]
    assert payload(looked)["id"] == "sales/exchange-policy"

    async def refused() -> None:
        async with session(station, "revoked"):
            pass

    with pytest.raises(Exception):  # noqa: B017 - the SDK's own error for a 401
        run(refused)


def test_a_keyless_request_is_told_where_the_resource_metadata_is(station: dict[str, Any]) -> None:
    """401 carries WWW-Authenticate: Bearer with resource_metadata (RFC 9728), on /mcp
    and on REST; the documents it names parse and say bearer keys in the header; a 403
    keeps E_FORBIDDEN and says it is about a capability, not the key."""
    url = station["url"]
    keyless = httpx.post(url + "/mcp", json=PING, headers=ACCEPT, timeout=TIMEOUT)
    assert keyless.status_code == 401
    assert keyless.json()["error"]["code"] == "E_FORBIDDEN"
    assert "not authenticated (401)" in keyless.json()["error"]["message"]
    challenge = keyless.headers["www-authenticate"]
    scheme, _, params = challenge.partition(" ")
    assert scheme == "Bearer"
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    named = fields["resource_metadata"].strip('"')
    assert named == url + "/.well-known/oauth-protected-resource/mcp"
    document = httpx.get(named, timeout=TIMEOUT)
    assert document.status_code == 200
    meta = document.json()
    assert meta["resource"] == url + "/mcp"
    assert meta["bearer_methods_supported"] == ["header"]
    assert "authorization_servers" not in meta  # keys, not an OAuth flow
    rest = httpx.post(url + "/v1/forests/acme/look", json={"id": "_index"}, timeout=TIMEOUT)
    assert rest.status_code == 401
    root = rest.headers["www-authenticate"]
    assert f'resource_metadata="{url}/.well-known/oauth-protected-resource"' in root
    whole = httpx.get(url + "/.well-known/oauth-protected-resource", timeout=TIMEOUT).json()
    assert whole["resource"] == url and whole["bearer_methods_supported"] == ["header"]
    listed = httpx.get(url + "/v1/forests", timeout=TIMEOUT)
    assert listed.status_code == 401 and "resource_metadata=" in listed.headers["www-authenticate"]
    denied = station["client"].post(
        "/v1/forests/acme/plant",
        json={"node": NOTE},
        headers={"Authorization": f"Bearer {station['reader']}"},
    )
    assert denied.status_code == 403 and "www-authenticate" not in denied.headers
    error = denied.json()["error"]
    assert error["code"] == "E_FORBIDDEN" and error["message"].startswith("forbidden (403)")
    # The SDK's own client, sent the key the document asks for, connects.

    async def connect() -> str | None:
        async with session(station, "reader") as client:
            return client.protocol_version

    assert run(connect) == "2025-11-25"


@pytest.mark.parametrize("era", ERAS)
def test_a_key_is_listed_only_the_tools_its_caps_allow(station: dict[str, Any], era: str) -> None:
    """A read-only key is offered no write, tend or answer tool (as a --readonly vine
    serve lists no writes); one named anyway answers E_FORBIDDEN."""

    async def body() -> tuple[list[str], Any]:
        async with session(station, "reader", era=era) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            planted = await client.call_tool("plant", {"forest": "acme", "node": NOTE})
            return names, planted

    names, planted = run(body)
    assert names == ["forests", *(n for n in STATION_CALLS if NEEDS[n] == "read")]
    assert "plant" not in names and "query" not in names
    assert planted.is_error and payload(planted)["error"]["code"] == "E_FORBIDDEN"
    assert "'write' capability" in payload(planted)["error"]["message"]


@pytest.mark.parametrize("era", ERAS)
def test_tools_and_calls_in_each_era(station: dict[str, Any], era: str) -> None:
    async def body() -> tuple[str | None, list[str], dict[str, Any]]:
        async with session(station, "all", era=era) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            looked = payload(
                await client.call_tool("look", {"forest": "acme", "id": "sales/exchange-policy"})
            )
            return client.protocol_version, names, looked

    version, names, looked = run(body)
    assert version == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert names == ["forests", *STATION_CALLS]
    assert looked["id"] == "sales/exchange-policy"


def test_wrong_forest_unknown_tool_and_bad_forest(station: dict[str, Any]) -> None:
    args = {"id": "sales/exchange-policy"}
    todo = [
        ("look", {"forest": "acme", **args}),
        ("look", {"forest": "nowhere", **args}),
        ("look", {"forest": "other", **args}),
        ("look", {"forest": ".station", **args}),
        ("look", args),
        ("look", {"forest": 3, **args}),
        ("nosuchtool", {}),
        ("nosuchtool", {"forest": "other"}),
    ]
    got = [payload(r) for r in run(calls, station, "other", todo)]
    wrong, absent, mine, hidden, missing, typed, unknown, unknown_forest = got
    assert wrong["error"]["code"] == absent["error"]["code"] == "E_NOT_FOUND"
    assert wrong["error"]["message"].replace("acme", "X") == absent["error"]["message"].replace(
        "nowhere", "X"
    )
    assert wrong == rest(station, "other", "look", args).json()
    assert mine["id"] == "sales/exchange-policy"
    assert hidden["error"]["code"] == "E_NOT_FOUND"
    assert missing["error"]["code"] == typed["error"]["code"] == "E_SCHEMA"
    assert unknown["error"]["code"] == unknown_forest["error"]["code"] == "E_NOT_FOUND"
    assert "nosuchtool" in unknown["error"]["message"]


def test_capabilities(station: dict[str, Any]) -> None:
    note = dict(NOTE, id="sales/cap-note-mcp")
    todo = [
        ("query", {"forest": "acme", "id": "sales/orders-2026", "sql": "SELECT 1"}),
        ("plant", {"forest": "acme", "node": note}),
        ("graft", {"forest": "acme", "id": "sales/price-list", "patch": {}}),
        (
            "tend",
            {
                "forest": "acme",
                "id": "sales/orders-2026",
                "sql": "DELETE FROM orders WHERE id = 'x'",
            },
        ),
        ("answer", {"forest": "acme", "question": "Anything?"}),
    ]
    for result in run(calls, station, "reader", todo):
        assert result.is_error and payload(result)["error"]["code"] == "E_FORBIDDEN"
    tend = run(calls, station, "sales", [todo[3]])[0]
    assert payload(tend)["error"]["code"] == "E_FORBIDDEN"


def test_writes_commit_with_the_principal_and_are_audited(station: dict[str, Any]) -> None:
    root = station["root"]
    before = len(audit.rows(Store(root), limit=100_000))
    outside = dict(NOTE, id="people/mcp-station-note", parent="people/_index")
    todo = [
        ("plant", {"forest": "acme", "node": NOTE}),
        ("plant", {"forest": "acme", "node": outside}),
        (
            "graft",
            {
                "forest": "acme",
                "id": NOTE["id"],
                "patch": {
                    "set_frontmatter": {"summary": "Edited over the Station's MCP endpoint."}
                },
            },
        ),
    ]
    planted, refused, grafted = [payload(r) for r in run(calls, station, "sales", todo)]
    tended = payload(
        run(
            calls,
            station,
            "deny",
            [
                (
                    "tend",
                    {
                        "forest": "acme",
                        "id": "sales/orders-2026",
                        "sql": "DELETE FROM orders WHERE id = '1001'",
                    },
                )
            ],
        )[0]
    )
    assert tended["rows_affected"] == 1
    for out, who in ((planted, "sales"), (grafted, "sales"), (tended, "deny")):
        message = git(root / "acme", "log", "-1", "--format=%B", out["commit"])
        assert message.rstrip().endswith(f"\n\nstation-principal: {who}")
    assert refused["error"]["code"] == "E_FORBIDDEN"
    keyless = httpx.post(station["url"] + "/mcp", json=PING, headers=ACCEPT, timeout=TIMEOUT)
    assert keyless.status_code == 401
    rows = audit.rows(Store(root), limit=100_000)
    # One row per tool call and one for the refused request; none for the protocol.
    assert len(rows) == before + len(todo) + 2
    new = rows[: len(todo) + 2]
    assert [(r["principal"], r["call"], r["outcome"], r["status"]) for r in new] == [
        (None, "mcp", "E_FORBIDDEN", 401),
        ("deny", "tend", "ok", 200),
        ("sales", "graft", "ok", 200),
        ("sales", "plant", "E_FORBIDDEN", 403),
        ("sales", "plant", "ok", 200),
    ]
    assert [r["commit_sha"] for r in new[1:3]] == [tended["commit"], grafted["commit"]]
    assert new[4]["commit_sha"] == planted["commit"]
    assert all(r["forest"] == "acme" for r in new[1:]) and new[0]["forest"] is None


@pytest.mark.parametrize("who", ["deny", "sales"])
def test_a_scoped_key_never_sees_the_hidden_subtree(station: dict[str, Any], who: str) -> None:
    todo = [(call, {"forest": "acme", **args}) for call, args in PROBES]
    todo += [
        ("harvest", {"forest": "acme", "query": "secret plan", "k": 5}),
        ("answer", {"forest": "acme", "question": f"What is {WORD}?"}),
        ("forests", {}),
    ]

    async def body() -> tuple[Any, list[Any]]:
        async with session(station, who) as client:
            listed = await client.list_tools()
            return listed, [await client.call_tool(n, a) for n, a in todo]

    listed, results = run(body)
    assert WORD not in listed.model_dump_json()
    for (call, args), result in zip(todo, results, strict=True):
        out = payload(result)
        # The caller's own words echoed back (harvest's query and terms, a batch's
        # missing ids) reveal nothing.
        text = json.dumps(
            {k: v for k, v in out.items() if k not in ("query", "terms", "missing", "question")},
            ensure_ascii=False,
        )
        assert WORD not in text and WORD.lower() not in text, (call, args, text[:400])
        if not result.is_error:
            assert "secret/" not in text, (call, args, text[:400])
        elif out["error"]["code"] == "E_NOT_FOUND" and call != "answer":
            assert out["error"]["message"].startswith("node not found: ")
    # The unrestricted key does reach the hidden nodes with the same probes.
    seen = run(
        calls,
        station,
        "all",
        [
            ("sniff", {"forest": "acme", "terms": [WORD]}),
            ("pick", {"forest": "acme", "id": "_index"}),
        ],
    )
    assert all(WORD in json.dumps(payload(r)) for r in seen)


def test_host_check_answers_only_the_names_it_is_told(station: dict[str, Any]) -> None:
    with _serve(station["root"], ["brain.internal"], with_port=True) as url:
        port = url.rsplit(":", 1)[1]
        key = {"Authorization": f"Bearer {station['reader']}"}
        codes: dict[str, httpx.Response] = {}
        for host in host_probes(port):
            codes[host] = ping(url + "/mcp", **key, Host=host)
        origin = ping(url + "/mcp", **key, Origin="http://evil.example")
        # No key: the Host check still comes first.
        keyless = ping(url + "/mcp", Host="evil.example")
        # REST keeps its behaviour (its key is its guard).
        rest_evil = httpx.get(url + "/v1/health", headers={"Host": "evil.example"})
    for host in ("evil.example", f"evil.example:{port}"):
        reply = codes.pop(host)
        assert reply.status_code == 421
        assert reply.json()["error"]["code"] == "E_HOST_NOT_ALLOWED"
    assert {h: r.status_code for h, r in codes.items()} == dict.fromkeys(codes, 200)
    assert origin.status_code == 403 and origin.json()["error"]["code"] == "E_FORBIDDEN"
    assert keyless.status_code == 421
    assert rest_evil.status_code == 200
    hosts, _ = hosts_for(None, [])
    assert "127.0.0.1:*" in hosts and "localhost:*" in hosts and "[::1]:*" in hosts
    assert hosts_for(8080, [])[0] == ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"]


@pytest.mark.parametrize("how", ["flag", "env"])
def test_vine_station_serve_mounts_mcp_with_allow_host(
    station: dict[str, Any], tmp_path: Path, how: str
) -> None:
    port = free_port()
    err = tmp_path / "station.log"
    argv = [VINE, "station", "serve", "--root", str(station["root"]), "--port", str(port)]
    env = dict(os.environ)
    if how == "flag":
        argv += ["--allow-host", "brain.internal"]
    else:
        env["MONKEYLLM_STATION_ALLOWED_HOSTS"] = "other.internal brain.internal"
    with open(err, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=env)
    try:
        deadline = time.monotonic() + TIMEOUT
        while f":{port}/mcp" not in err.read_text():
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, err.read_text()
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        while True:
            with contextlib.suppress(httpx.TransportError):
                httpx.get(url + "/v1/health", timeout=1)
                break
            assert time.monotonic() < deadline
            time.sleep(0.05)
        key = {"Authorization": f"Bearer {station['reader']}"}
        named = ping(url + "/mcp", **key, Host="brain.internal")
        evil = ping(url + "/mcp", **key, Host="evil.example")
    finally:
        stop(proc)
    assert named.status_code == 200, named.text
    assert evil.status_code == 421
    assert f"MCP over streamable HTTP at http://127.0.0.1:{port}/mcp" in err.read_text()
    assert "Traceback" not in err.read_text()


def test_mcp_refusals_are_envelopes(station: dict[str, Any]) -> None:
    """What the transport refuses (a GET, a wrong Content-Type, an oversized body) is the
    error envelope with its status, never a hanging stream or plain text."""
    key = {"Authorization": f"Bearer {station['reader']}", **ACCEPT}
    url = station["url"] + "/mcp"
    got = {
        "get": httpx.get(url, headers=key, timeout=TIMEOUT),
        "delete": httpx.delete(url, headers=key, timeout=TIMEOUT),
        "text": httpx.post(
            url, content=b"hello", timeout=TIMEOUT, headers={**key, "Content-Type": "text/plain"}
        ),
        "huge": httpx.post(
            url,
            content=b"x" * (5 << 20),
            timeout=TIMEOUT,
            headers={**key, "Content-Type": "application/json"},
        ),
    }
    assert {k: r.status_code for k, r in got.items()} == {
        "get": 405,
        "delete": 405,
        "text": 400,
        "huge": 413,
    }
    for response in got.values():
        body = response.json()
        assert set(body) == {"error"} and body["error"]["code"] == "E_SCHEMA", body
    assert got["get"].headers["allow"] == "POST"
    assert "content-type" in got["text"].json()["error"]["message"].lower()
    fine = httpx.post(url, json=PING, headers=key, timeout=TIMEOUT)
    assert fine.status_code == 200 and fine.json()["result"]["serverInfo"]["name"]
