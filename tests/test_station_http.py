"""What a plain HTTP client trips on at the Station: routes that do not exist, methods
a route does not take, bodies that are not JSON or too large. A real Station on
127.0.0.1 and a real HTTP client; every refusal is the error envelope, never
Starlette's plain text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from monkeyllm.serve.station import audit
from monkeyllm.serve.station.app import MAX_BODY
from monkeyllm.serve.station.openapi import document
from monkeyllm.serve.station.store import Store

from .forestkit import copy_sample
from .test_station import _key, _serve


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("station-http")
    copy_sample(root / "acme")
    key = _key(root, "web", caps="read,query")[1]
    with _serve(root) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield {"root": root, "client": client, "auth": {"Authorization": f"Bearer {key}"}}


def _envelope(reply: httpx.Response) -> dict[str, Any]:
    assert reply.headers["content-type"].startswith("application/json"), reply.text
    body = reply.json()
    assert set(body) == {"error"} and body["error"]["code"] and body["error"]["message"]
    return body["error"]


@pytest.mark.parametrize(
    "method,path",
    [("GET", "/"), ("GET", "/v1"), ("GET", "/v1/forests/acme"), ("POST", "/v1/forests/acme/a/b")],
)
def test_an_unknown_route_answers_the_404_envelope(
    station: dict[str, Any], method: str, path: str
) -> None:
    reply = station["client"].request(method, path, headers=station["auth"])
    assert reply.status_code == 404
    error = _envelope(reply)
    assert error["code"] == "E_NOT_FOUND" and path in error["message"]
    assert "POST /v1/forests/{forest}/{call}" in error["hint"]


@pytest.mark.parametrize(
    "method,path,allow",
    [
        ("GET", "/v1/forests/acme/locate", "POST"),
        ("PUT", "/v1/forests/acme/look", "POST"),
        ("POST", "/v1/forests", "GET"),
        ("DELETE", "/v1/health", "GET"),
    ],
)
def test_a_wrong_method_answers_the_405_envelope_with_allow(
    station: dict[str, Any], method: str, path: str, allow: str
) -> None:
    reply = station["client"].request(method, path, headers=station["auth"])
    assert reply.status_code == 405
    assert allow in reply.headers["allow"]
    error = _envelope(reply)
    assert error["code"] == "E_SCHEMA" and f"{method} {path}" in error["message"]
    assert "openapi.json" in error["hint"]


def test_a_body_over_the_limit_answers_413_and_runs_nothing(station: dict[str, Any]) -> None:
    client = station["client"]
    huge = json.dumps({"query": "exchange " * (MAX_BODY // 9 + 10)}).encode()
    assert len(huge) > MAX_BODY
    declared = client.post(
        "/v1/forests/acme/locate",
        content=huge,
        headers={**station["auth"], "Content-Type": "application/json"},
    )
    assert declared.status_code == 413
    assert _envelope(declared)["code"] == "E_SCHEMA"
    assert "4 MiB" in _envelope(declared)["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
        for at in range(0, len(huge), 1 << 20):
            yield huge[at : at + (1 << 20)]

    streamed = client.post(
        "/v1/forests/acme/locate",
        content=chunks(),
        headers={**station["auth"], "Content-Type": "application/json"},
    )
    assert streamed.status_code == 413 and _envelope(streamed)["code"] == "E_SCHEMA"
    keyless = client.post("/v1/forests/acme/locate", content=huge)
    assert keyless.status_code == 401 and "www-authenticate" in keyless.headers
    with Store(station["root"]) as store:
        rows = audit.rows(store, limit=3)  # newest first: one row each, nothing run
    assert [(r["status"], r["outcome"]) for r in rows] == [
        (401, "E_FORBIDDEN"),
        (413, "E_SCHEMA"),
        (413, "E_SCHEMA"),
    ]
    # Just under the limit is read and answered: by the call itself (locate's query is
    # at most 1,000 characters), not by the size gate.
    fits = json.dumps({"query": "exchange policy " + "x" * (MAX_BODY - 200), "k": 1}).encode()
    ok = client.post("/v1/forests/acme/locate", content=fits, headers=station["auth"])
    assert ok.status_code == 400, ok.text[:300]
    assert "at most 1000 characters" in _envelope(ok)["message"]
    small = json.dumps({"query": "exchange policy", "k": 1}).encode()
    padded = small[:-1] + b" " * (MAX_BODY - 200 - len(small)) + b"}"  # JSON whitespace
    assert len(padded) > MAX_BODY // 2
    ok = client.post("/v1/forests/acme/locate", content=padded, headers=station["auth"])
    assert ok.status_code == 200, ok.text[:300]
    assert "413" in document("0")["paths"]["/v1/forests/{forest}/locate"]["post"]["responses"]


def test_a_body_that_is_not_json_says_how_to_send_one(station: dict[str, Any]) -> None:
    form = station["client"].post(
        "/v1/forests/acme/locate", data={"query": "exchange"}, headers=station["auth"]
    )
    assert form.status_code == 400
    error = _envelope(form)
    assert error["message"] == "locate: the body is not valid JSON"
    assert "Content-Type: application/json" in error["hint"]


@pytest.mark.parametrize(
    "call,body", [("harvest", '{"query": "\\ud800 exchange"}'), ("look", '{"id": "sales/\\udc00"}')]
)
def test_a_lone_surrogate_is_a_400_envelope_not_a_500(
    station: dict[str, Any], call: str, body: str
) -> None:
    reply = station["client"].post(
        f"/v1/forests/acme/{call}",
        content=body.encode(),
        headers={**station["auth"], "Content-Type": "application/json"},
    )
    assert reply.status_code == 400, reply.text[:200]
    assert "lone surrogate" in _envelope(reply)["message"]


def test_auth_challenges_say_what_was_wrong_with_the_key(station: dict[str, Any]) -> None:
    """RFC 6750's words in WWW-Authenticate: no error code without a key,
    invalid_token for a key that is not one, on REST and /mcp alike; a key that lacks
    the call's capability is a 403 whose envelope names the capability."""
    client = station["client"]
    body = {"query": "exchange", "k": 1}
    keyless = client.post("/v1/forests/acme/locate", json=body)
    assert keyless.status_code == 401
    assert "error=" not in keyless.headers["www-authenticate"]
    assert keyless.headers["www-authenticate"].startswith("Bearer ")
    for headers in ({"Authorization": "Bearer mk_nope"}, {"X-API-Key": "mk_nope"}):
        for path in ("/v1/forests/acme/locate", "/mcp"):
            bad = client.post(path, json=body, headers=headers)
            challenge = bad.headers["www-authenticate"]
            assert bad.status_code == 401 and 'error="invalid_token"' in challenge, path
            assert "resource_metadata=" in challenge
    # The web key holds read and query: plant needs write.
    planted = client.post(
        "/v1/forests/acme/plant", json={"node": {"id": "sales/x"}}, headers=station["auth"]
    )
    assert planted.status_code == 403 and "www-authenticate" not in planted.headers
    error = _envelope(planted)
    assert error["code"] == "E_FORBIDDEN" and error["capability"] == "write"
