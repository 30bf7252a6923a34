"""The Station: a real server on 127.0.0.1 (uvicorn in a thread) and a real HTTP client.

REST answers what the Python API answers; statuses follow the envelope; keys, forests
and capabilities are enforced; a scoped key never sees a hidden subtree; every call
is audited and Station commits name their principal.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from monkeyllm import CALLS, Vine
from monkeyllm.serve.station import audit, keys
from monkeyllm.serve.station.app import Station, build
from monkeyllm.serve.station.store import Store

from .forestkit import copy_sample, git, node
from .mcpkit import free_port, stable
from .test_mcp import READS

WORD = "ZANZIBARQUUX"


SECRET_IDS = ("secret/_index", "secret/plan")


SECRET_BRANCH = node(
    "secret/_index",
    "_index",
    f"Secret {WORD}",
    f"The {WORD} programme, hidden.",
    type="branch",
    body=f"# Secret {WORD}\n",
)


SECRET_NOTE = node(
    "secret/plan",
    "secret/_index",
    f"Plan {WORD}",
    f"Where {WORD} goes next, exchange.",
    tags=["sales", WORD.lower()],
    links=[{"rel": "related-to", "target": "sales/exchange-policy"}],
    body=f"# Plan\n\n## Deadlines\n\n{WORD} exchange deadline retail order NF-4412 {WORD}.\n",
)


def two_forests(root: Path) -> None:
    """The Station's folder ``root``: ``acme`` (git, with the hidden subtree) and
    ``other``."""
    copy_sample(root / "acme", git=True)
    copy_sample(root / "other")
    _plant_secret(root / "acme")


def _plant_secret(root: Path) -> None:
    with Vine(root) as vine:
        for node in (SECRET_BRANCH, SECRET_NOTE):
            assert "error" not in vine.plant(node), node
        out = vine.graft(
            "sales/exchange-policy", {"add_links": [{"rel": "related-to", "target": "secret/plan"}]}
        )
        assert "error" not in out


@contextlib.contextmanager
def _serve(
    root: Path, allow_hosts: list[str] | None = None, with_port: bool = False
) -> Iterator[str]:
    """A Station on a free port in a thread; ``with_port`` builds it knowing its port
    (the MCP Host check of ``vine station serve``), else it answers any loopback port."""
    port = free_port()
    app = build(Station(root), port if with_port else None, allow_hosts)
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_config=None, log_level="warning", lifespan="on"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)


def _key(
    root: Path,
    principal: str,
    forest: str = "acme",
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    caps: str = "read",
) -> tuple[str, str]:
    with Store(root) as store:
        return keys.add(store, principal, forest, list(allow), list(deny), keys.parse_caps(caps))


@contextlib.contextmanager
def serving_station(root: Path, extra_caps: str = "") -> Iterator[dict[str, Any]]:
    """A Station over ``acme`` (git, with the hidden subtree) and ``other``, its keys
    (``all`` and ``deny`` also get ``extra_caps``), a revoked one, and a client."""
    two_forests(root)
    made: dict[str, Any] = {
        "root": root,
        "all": _key(root, "admin", caps="read,query,write,tend" + extra_caps)[1],
        "deny": _key(root, "deny", deny=("secret/",), caps="read,query,write,tend" + extra_caps)[1],
        "sales": _key(root, "sales", allow=("sales/",), caps="read,query,write")[1],
        "reader": _key(root, "reader")[1],
        "other": _key(root, "o", forest="other")[1],
    }
    revoked_id, made["revoked"] = _key(root, "gone")
    with Store(root) as store:
        assert keys.revoke(store, revoked_id)
    with _serve(root) as url, httpx.Client(base_url=url, timeout=30) as client:
        made["url"] = url
        made["client"] = client
        yield made


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving_station(tmp_path_factory.mktemp("station")) as made:
        yield made


def post(
    st: dict[str, Any],
    key: str | None,
    call: str,
    args: Any,
    forest: str = "acme",
    header: str = "bearer",
) -> httpx.Response:
    headers = {}
    if key is not None:
        headers = (
            {"Authorization": f"Bearer {st[key]}"} if header == "bearer" else {"X-API-Key": st[key]}
        )
    body = args if isinstance(args, bytes) else json.dumps(args).encode()
    return st["client"].post(
        f"/v1/forests/{forest}/{call}",
        content=body,
        headers={**headers, "Content-Type": "application/json"},
    )


def test_rest_answers_what_the_python_api_answers(tmp_path: Path) -> None:
    root = tmp_path / "root"
    copy_sample(root / "acme", git=True)
    twin = copy_sample(tmp_path / "twin")
    key = _key(root, "admin", caps="read,query")[1]
    with Vine(twin, writable=False) as vine:
        expected = {name: vine.call(name, args) for name, args in READS.items()}
    with _serve(root) as url, httpx.Client(base_url=url, timeout=30) as client:
        for name, args in READS.items():
            got = client.post(f"/v1/forests/acme/{name}", json=args, headers={"X-API-Key": key})
            assert got.status_code == 200, got.text
            body = got.json()
            for out in (body, expected[name]):
                out.pop("elapsed_ms", None)
            # Over the Station, harvest also says which of its steps took how long.
            assert ("trace" in body) == (name == "harvest"), name
            body.pop("trace", None)
            assert stable(body) == stable(expected[name]), name


def test_health_openapi_and_forests(station: dict[str, Any]) -> None:
    client = station["client"]
    health = client.get("/v1/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert health.json()["forests"]["served"] == 2  # .station is not a forest
    doc = client.get("/v1/openapi.json").json()
    for name, call in CALLS.items():
        op = doc["paths"][f"/v1/forests/{{forest}}/{name}"]["post"]
        body = op["requestBody"]["content"]["application/json"]["schema"]
        assert body == call.input_schema()
        assert "forest" not in body["properties"]
    listed = client.get(
        "/v1/forests", headers={"Authorization": f"Bearer {station['sales']}"}
    ).json()
    assert [f["id"] for f in listed["forests"]] == ["acme"]
    assert listed["forests"][0]["roots"] == ["sales/_index"]
    assert client.get("/v1/forests").status_code == 401


def test_keys_missing_bad_revoked_and_wrong_forest(station: dict[str, Any]) -> None:
    args = {"id": "sales/exchange-policy"}
    assert post(station, "reader", "look", args).status_code == 200
    assert post(station, "reader", "look", args, header="x-api-key").status_code == 200
    for key in (None, "revoked"):
        got = post(station, key, "look", args)
        assert got.status_code == 401 and got.json()["error"]["code"] == "E_FORBIDDEN"
    bad = station["client"].post(
        "/v1/forests/acme/look", json=args, headers={"Authorization": "Bearer mk_nope"}
    )
    assert bad.status_code == 401
    assert bad.json() == post(station, None, "look", args).json()
    # A key for one forest: another forest looks exactly like an absent one.
    wrong = post(station, "other", "look", args, forest="acme")
    absent = post(station, "other", "look", args, forest="nowhere")
    assert wrong.status_code == absent.status_code == 404
    assert wrong.json()["error"]["message"].replace("acme", "X") == absent.json()["error"][
        "message"
    ].replace("nowhere", "X")
    assert post(station, "other", "look", args, forest="other").status_code == 200
    assert post(station, "reader", "look", args, forest=".station").status_code == 404


@pytest.mark.parametrize(
    ("call", "args", "status", "code"),
    [
        ("look", {"id": "no/such-node"}, 404, "E_NOT_FOUND"),
        ("look", {"id": 3}, 400, "E_SCHEMA"),
        ("look", {"id": "sales/exchange-policy", "forest": "acme"}, 400, "E_SCHEMA"),
        ("look", b"{not json", 400, "E_SCHEMA"),
        ("look", b"[1, 2]", 400, "E_SCHEMA"),
        ("nosuchcall", {}, 404, "E_NOT_FOUND"),
        (
            "query",
            {"id": "sales/orders-2026", "sql": "SELECT nope FROM orders"},
            400,
            "E_QUERY_INVALID",
        ),
        (
            "query",
            {"id": "sales/orders-2026", "sql": "DELETE FROM orders"},
            403,
            "E_QUERY_FORBIDDEN",
        ),
        (
            "tend",
            {"id": "sales/orders-2026", "sql": "DELETE FROM orders"},
            403,
            "E_QUERY_FORBIDDEN",
        ),
    ],
)
def test_status_follows_the_envelope(
    station: dict[str, Any], call: str, args: Any, status: int, code: str
) -> None:
    got = post(station, "all", call, args)
    assert got.status_code == status, got.text
    assert set(got.json()) == {"error"} and got.json()["error"]["code"] == code


def test_status_map_is_one_table() -> None:
    from monkeyllm.serve.station.status import status_of

    def env(code: str) -> dict[str, Any]:
        return {"error": {"code": code, "message": "m"}}

    assert [
        status_of(env(c))
        for c in ("E_LOCKED", "E_TIMEOUT", "E_INTERNAL", "E_FORBIDDEN", "E_WHATEVER")
    ] == [409, 504, 500, 403, 400]
    assert status_of({"results": []}) == 200


def test_capabilities(station: dict[str, Any]) -> None:
    note = node("sales/cap-note", "sales/_index", "Cap note", "Planted to test capabilities here.")
    for call, args in (
        ("query", {"id": "sales/orders-2026", "sql": "SELECT 1"}),
        ("plant", {"node": note}),
        ("graft", {"id": "sales/price-list", "patch": {}}),
        ("tend", {"id": "sales/orders-2026", "sql": "DELETE FROM orders WHERE id = 'x'"}),
    ):
        got = post(station, "reader", call, args)
        assert got.status_code == 403 and got.json()["error"]["code"] == "E_FORBIDDEN"
    assert (
        post(
            station,
            "sales",
            "tend",
            {"id": "sales/orders-2026", "sql": "DELETE FROM orders WHERE 1=0"},
        ).status_code
        == 403
    )


def test_writes_commit_with_the_principal_and_scope(station: dict[str, Any]) -> None:
    note = node(
        "sales/station-note", "sales/_index", "Station note", "Planted over the REST Station."
    )
    got = post(station, "sales", "plant", {"node": note})
    assert got.status_code == 200, got.text
    sha = got.json()["commit"]
    message = git(station["root"] / "acme", "log", "-1", "--format=%B", sha)
    assert message.rstrip().endswith("\n\nstation-principal: sales")
    outside = dict(note, id="people/station-note", parent="people/_index")
    for key in ("sales", "deny"):
        bad = dict(outside, id="secret/x", parent="secret/_index") if key == "deny" else outside
        got = post(station, key, "plant", {"node": bad})
        assert got.status_code == 403 and got.json()["error"]["code"] == "E_FORBIDDEN"
    linked = post(
        station,
        "deny",
        "graft",
        {
            "id": "sales/price-list",
            "patch": {"add_links": [{"rel": "related-to", "target": "secret/plan"}]},
        },
    )
    assert linked.status_code == 403
    hidden = post(station, "deny", "graft", {"id": "secret/plan", "patch": {}})
    assert hidden.status_code == 404
    rows = audit.rows(Store(station["root"]), limit=500)
    mine = [r for r in rows if r["commit_sha"] == sha]
    assert mine and mine[0]["principal"] == "sales" and mine[0]["call"] == "plant"
    assert {"ok", "E_FORBIDDEN"} <= {r["outcome"] for r in rows}
    assert all(
        set(r)
        == {"ts", "principal", "key_id", "forest", "call", "outcome", "status", "commit_sha", "ms"}
        for r in rows
    )


PROBES: list[tuple[str, dict[str, Any]]] = [
    ("locate", {"query": WORD, "k": 5}),
    ("locate", {"query": "secret plan exchange", "k": 10, "scope": "all"}),
    ("locate", {"query": "secret", "scope": "branches"}),
    ("sniff", {"terms": [WORD], "k": 5}),
    ("sniff", {"terms": ["NF-4412", "exchange"], "k": 20}),
    ("sniff", {"terms": [WORD], "scope": "secret"}),
    ("sniff", {"terms": [WORD], "scope": "secret/plan"}),
    ("harvest", {"query": f"{WORD} exchange deadline", "k": 5}),
    ("harvest", {"query": "exchange deadline retail order", "terms": [WORD, "NF-4412"]}),
    ("look", {"id": "secret/plan"}),
    ("look", {"id": "secret/_index"}),
    ("look", {"id": "_index"}),
    ("look", {"id": "sales/exchange-policy"}),
    ("look", {"id": ["secret/plan", "sales/exchange-policy", "secret/_index"]}),
    ("pick", {"id": "secret/plan"}),
    ("pick", {"id": "_index"}),
    ("pick", {"id": ["_index", "secret/plan"]}),
    ("move", {"id": "secret/plan", "direction": "both"}),
    ("move", {"id": "_index", "rel": "children"}),
    ("move", {"id": "sales/exchange-policy", "direction": "both"}),
    ("scan", {"parent_id": "_index", "recursive": True, "limit": 50}),
    ("scan", {"parent_id": "_index", "recursive": True, "fields": ["title", "summary"]}),
    ("scan", {"parent_id": "_index", "recursive": True, "after": "", "limit": 50}),
    ("scan", {"parent_id": "secret"}),
    ("query", {"id": "secret/plan", "sql": "SELECT 1"}),
    ("history", {"id": "secret/plan"}),
    ("history", {"id": "_index", "limit": 50}),
    ("history", {"id": "sales/exchange-policy"}),
    ("calendar", {"granularity": "day", "limit": 120}),
    ("calendar", {"scope": "secret"}),
    ("coverage", {}),
    ("coverage", {"scope": "secret"}),
]


@pytest.mark.parametrize("who", ["deny", "sales"])
def test_a_scoped_key_never_sees_the_hidden_subtree(station: dict[str, Any], who: str) -> None:
    for call, args in PROBES:
        got = post(station, who, call, args)
        # The caller's own words echoed back (harvest's query and terms, a batch's
        # missing ids) reveal nothing.
        text = json.dumps(
            {k: v for k, v in got.json().items() if k not in ("query", "terms", "missing")},
            ensure_ascii=False,
        )
        assert WORD not in text and WORD.lower() not in text, (call, args, text[:400])
        assert got.status_code in (200, 404), (call, args, text[:300])
        if got.status_code == 404:  # echoes the id asked for, exactly as for an absent one
            assert got.json()["error"]["message"].startswith("node not found: ")
        else:
            assert "secret/" not in text, (call, args, text[:400])
    batch = post(
        station, who, "look", {"id": ["secret/plan", "sales/exchange-policy", "secret/_index"]}
    ).json()
    assert batch["missing"] == (
        ["secret/plan", "secret/_index"] if who == "deny" else ["secret/plan", "secret/_index"]
    )
    # The unrestricted key does see it (the probes do reach the hidden nodes).
    assert WORD in post(station, "all", "sniff", {"terms": [WORD]}).text
    assert WORD in post(station, "all", "pick", {"id": "_index"}).text


def test_hidden_is_byte_identical_to_absent(tmp_path: Path) -> None:
    """The same question about a hidden node, before and after it is gone, gets the
    same bytes: an E_NOT_FOUND suggests the nearest visible ids, hidden ones never."""
    probes = [
        (call, {"id": node, **({"sql": "SELECT 1"} if call == "query" else {})})
        for call in ("look", "pick", "move", "query")
        for node in ("secret/plan", "secret/plam", "secret/_index", "secret-plan")
    ]
    probes += [("scan", {"parent_id": "secret"}), ("sniff", {"terms": "x", "scope": "secret"})]
    with serving_station(tmp_path) as st:
        before = [post(st, "deny", call, args) for call, args in probes]
        assert {r.status_code for r in before} == {404}
        # Near ids are suggested, visible ones only; the unrestricted key sees them all.
        typo = post(st, "deny", "look", {"id": "sales/exchange-polcy"}).json()["error"]
        assert "'sales/exchange-policy'" in typo["hint"]
        for near in ("secret/plam", "secret-plan"):  # the engine would suggest it
            mine = post(st, "all", "look", {"id": near}).json()["error"]
            assert "'secret/plan'" in mine["hint"], mine
        assert all(b"secret/plan'" not in r.content for r in before)
        shutil.rmtree(tmp_path / "acme" / "secret")
        after = [post(st, "deny", call, args) for call, args in probes]
        assert [r.content for r in after] == [r.content for r in before]
        assert post(st, "all", "look", {"id": "secret/plan"}).status_code == 404


def test_scoped_counts(station: dict[str, Any]) -> None:
    sniff = post(station, "sales", "sniff", {"terms": ["exchange"], "k": 3}).json()
    assert sniff["scanned_nodes"] == len(sniff["results"]) <= 3
    assert all(r["id"].startswith("sales/") for r in sniff["results"])
    assert all(
        not t or all(x.startswith("sales/") for x in r["trail"])
        for r in sniff["results"]
        for t in [r["trail"]]
    )

    def scan(key: str, parent: str, limit: int) -> dict[str, Any]:
        args = {"parent_id": parent, "recursive": True, "fields": ["id"], "limit": limit}
        return post(station, key, "scan", args).json()

    scoped, full = scan("sales", "sales", 2), scan("all", "sales", 50)
    assert scoped["total"] == full["total"] and scoped["returned"] == 2 and scoped["truncated"]
    everything, unscoped = scan("deny", "_index", 50), scan("all", "_index", 50)
    assert everything["total"] == unscoped["total"] - len(SECRET_IDS)
    root = post(station, "sales", "look", {"id": "_index"})
    assert root.status_code == 404
    look = post(station, "deny", "look", {"id": "_index"}).json()
    leaves = sum(1 for c in look["children"] if not c["id"].endswith("_index"))
    branches = sum(1 for c in look["children"] if c["id"].endswith("_index"))
    assert look["coverage"] == "{} banana{}, {} sub-branch{}.".format(
        leaves, "" if leaves == 1 else "s", branches, "" if branches == 1 else "es"
    )


def test_a_statement_past_its_limit_answers_504(station: dict[str, Any]) -> None:
    endless = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    started = time.monotonic()
    got = post(station, "all", "query", {"id": "sales/orders-2026", "sql": endless})
    assert got.status_code == 504, got.text
    assert got.json()["error"]["code"] == "E_TIMEOUT"
    assert time.monotonic() - started < 10
