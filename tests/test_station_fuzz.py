"""Random requests at every route of the Station's OpenAPI document: never a 5xx.

A real Station on 127.0.0.1 (``tests/test_station.py``'s server), its routes read from
``/v1/openapi.json``. Hypothesis draws, for every POST route: arbitrary JSON values,
objects shaped from the route's request schema with wrong and edge types, huge strings,
unicode and NUL, ids that try to leave the forest, raw bytes that are not JSON (or not
UTF-8), a random forest in the path, and a valid admin key, a scoped key, a revoked
one, a malformed one or none. GET routes get random headers.

Every answer is JSON; an error is exactly ``{"error": {"code", "message", "hint"?...}}``
with the status its code maps to (``status.py``; 401 for a refused key), and a success
is 200.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monkeyllm.serve.station.calls import STATION_CALLS
from monkeyllm.serve.station.status import UNAUTHORIZED, status_of
from monkeyllm.serve.station.store import Store

from .test_fuzz_surfaces import JUNK, TEXT, _of
from .test_station import _key, _serve, two_forests

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
MANY = settings(FUZZ, max_examples=300)
# Every (status, code) the fuzz met, so the last test can show it reached each outcome.
SEEN: Counter[tuple[int, str]] = Counter()

# Ids, scopes and parents that try to leave the forest or break a path.
ESCAPES = [
    "..",
    "../outside",
    "../../etc/passwd",
    "/etc/passwd",
    "sales/../../x",
    "secret/plan",
    "secret/_index",
    "secret",
    ".git/config",
    "_derived/catalog",
    ".station/station",
    "\x00",
    "sales/exchange-policy\x00",
    "a" * 5000,
    "/".join(["a"] * 400),
    "%2e%2e/x",
    "..\\x",
    "\uff0e\uff0e/x",
    "~/x",
    " ",
]
ID = st.one_of(TEXT, st.sampled_from(ESCAPES))
# A forest in the path: one segment (a "/" is another route, "." and ".." are resolved
# away by the client), the real ones most of the time.
FOREST = st.one_of(
    st.sampled_from(
        [
            "acme",
            "acme",
            "acme",
            "other",
            ".station",
            "nowhere",
            "ACME",
            "acme ",
            "a" * 300,
            "%00",
            "é",
            "_index",
            "~",
        ]
    ),
    st.text(min_size=1, max_size=30).filter(lambda s: "/" not in s and s not in (".", "..")),
)
WHO = st.sampled_from(["admin", "admin", "scoped", "scoped", "revoked", "bad", None])


class _Quiet(dict):  # type: ignore[type-arg]
    """The fixture's dict, shown briefly in a failing example."""

    def __repr__(self) -> str:
        return "<station>"


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from monkeyllm.serve.station import keys

    root = tmp_path_factory.mktemp("station-fuzz")
    two_forests(root)
    made: dict[str, Any] = _Quiet(
        {
            "admin": _key(root, "admin", caps="read,query,write,tend,answer,admin")[1],
            "scoped": _key(root, "scoped", deny=("secret/",), caps="read,query,write,answer")[1],
            "bad": "mk_" + "x" * 43,
        }
    )
    revoked_id, made["revoked"] = _key(root, "gone", caps="read,query,write")
    with Store(root) as store:
        assert keys.revoke(store, revoked_id)
    with _serve(root) as url, httpx.Client(base_url=url, timeout=60) as client:
        doc = client.get("/v1/openapi.json")
        assert doc.status_code == 200
        made["doc"] = doc.json()
        made["client"] = client
        made["root"] = root
        yield made


def _headers(st_: dict[str, Any], who: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {st_[who]}"} if who else {}


def _check(got: httpx.Response, what: Any) -> dict[str, Any]:
    """Never a 5xx; JSON always; an error is exactly the envelope with its status."""
    assert got.status_code < 500, (what, got.status_code, got.text[:500])
    try:
        body = got.json()
    except ValueError:
        raise AssertionError((what, got.status_code, got.text[:300])) from None
    assert isinstance(body, dict), (what, body)
    if got.status_code == 200:
        assert "error" not in body, (what, body)
        SEEN[(200, "ok")] += 1
        return body
    assert set(body) == {"error"}, (what, body)
    error = body["error"]
    assert isinstance(error, dict) and {"code", "message"} <= set(error), (what, body)
    assert isinstance(error["code"], str) and error["code"].startswith("E_"), body
    assert isinstance(error["message"], str) and error["message"], body
    assert isinstance(error.get("hint", ""), str), body
    assert error["code"] != "E_INTERNAL", (what, body)
    expected = (
        UNAUTHORIZED
        if got.status_code == UNAUTHORIZED and error["code"] == "E_FORBIDDEN"
        else status_of(body)
    )
    assert got.status_code == expected, (what, got.status_code, body)
    SEEN[(got.status_code, error["code"])] += 1
    return body


def _route(st_: dict[str, Any], name: str) -> dict[str, Any]:
    op = st_["doc"]["paths"][f"/v1/forests/{{forest}}/{name}"]["post"]
    return op["requestBody"]["content"]["application/json"]["schema"]


def shaped(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Objects shaped from a request schema: each property drawn from its own schema
    (wrong types now and then), ids from the escapes, sometimes an unknown key, the
    ``forest`` key the body must not carry, or a required key missing."""
    props = schema.get("properties", {})
    required = set(schema.get("required", []))

    def of(name: str, sub: dict[str, Any]) -> st.SearchStrategy[Any]:
        if name in ("id", "parent_id", "scope", "section"):
            return st.one_of(ID, st.lists(ID, max_size=4), _of(sub))
        return _of(sub)

    base = st.fixed_dictionaries(
        {k: of(k, v) for k, v in props.items() if k in required},
        optional={k: of(k, v) for k, v in props.items() if k not in required},
    )
    extra = st.dictionaries(
        st.sampled_from(["bogus", "forest", "", "\x00", "id" * 50]), JUNK, max_size=2
    )
    return st.one_of(
        base,
        base,
        st.tuples(base, extra).map(lambda t: {**t[0], **t[1]}),
        base.map(lambda d: {k: v for k, v in d.items() if k not in required}),
    )


RAW = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [
            b"",
            b" ",
            b"{",
            b"}",
            b"[1, 2]",
            b"null",
            b"3",
            b'"text"',
            b"\xff\xfe{}",
            b'{"id": "\xff"}',
            b"\x00",
            b'{"id": "a"}\x00',
            b'{"id": NaN}',
            b'{"id": Infinity}',
            b"{" * 5000 + b"}" * 5000,
            b'{"id": "' + b"x" * 300_000 + b'"}',
            b'{"a": 1, "a": 2}',
            b'{"id": "\\ud800"}',
            '{"id": "é"}'.encode("utf-16"),
        ]
    ),
    st.text(max_size=100).map(lambda s: s.encode("utf-8", "surrogatepass")),
)


def _post(
    st_: dict[str, Any],
    forest: str,
    name: str,
    content: bytes,
    who: str | None,
    ctype: str = "application/json",
) -> httpx.Response:
    return st_["client"].post(
        f"/v1/forests/{quote(forest, safe='')}/{name}",
        content=content,
        headers={**_headers(st_, who), "Content-Type": ctype},
    )


NAMES = sorted(STATION_CALLS)


def test_the_document_lists_every_call(station: dict[str, Any]) -> None:
    posts = {p for p, ops in station["doc"]["paths"].items() if "post" in ops}
    assert posts == {f"/v1/forests/{{forest}}/{n}" for n in NAMES}
    assert "answer" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_shaped_bodies_never_answer_a_5xx(station: dict[str, Any], name: str) -> None:
    schema = _route(station, name)

    @FUZZ
    @given(
        body=st.one_of(shaped(schema), shaped(schema), JUNK),
        who=WHO,
        forest=st.one_of(st.just("acme"), st.just("acme"), FOREST),
    )
    def run(body: Any, who: str | None, forest: str) -> None:
        content = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        got = _post(station, forest, name, content, who)
        out = _check(got, (name, forest, who, str(body)[:300]))
        if who in (None, "bad", "revoked"):
            assert got.status_code == UNAUTHORIZED, (name, who, out)

    run()


@MANY
@given(
    name=st.one_of(
        st.sampled_from(NAMES), st.sampled_from(["nosuch", "LOOK", "look ", "%00", "_index"])
    ),
    content=RAW,
    who=WHO,
    forest=FOREST,
    ctype=st.sampled_from(
        [
            "application/json",
            "text/plain",
            "",
            "application/json; charset=latin-1",
            "multipart/form-data; boundary=x",
        ]
    ),
)
def test_raw_bytes_never_answer_a_5xx(
    station: dict[str, Any], name: str, content: bytes, who: str | None, forest: str, ctype: str
) -> None:
    got = _post(station, forest, name, content, who, ctype)
    _check(got, (name, forest, who, content[:200]))


# Header values as a client may send them (printable ASCII, no surrounding blanks).
HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80
).map(str.strip)


@MANY
@given(
    path=st.sampled_from(["/v1/health", "/v1/openapi.json", "/v1/forests"]),
    who=WHO,
    auth=st.one_of(
        st.none(),
        HEADER_TEXT,
        st.just("Bearer"),
        st.just("Bearer mk_"),
        st.just("bearer  mk_x"),
        HEADER_TEXT.map(lambda s: ("Bearer " + s).strip()),
    ),
    api_key=st.one_of(st.none(), HEADER_TEXT, st.just("mk_")),
    extra=st.dictionaries(
        st.sampled_from(
            [
                "Accept",
                "Content-Type",
                "Origin",
                "Host",
                "X-Forwarded-For",
                "Accept-Encoding",
                "Cookie",
                "Range",
                "If-None-Match",
            ]
        ),
        HEADER_TEXT,
        max_size=4,
    ),
)
def test_get_routes_with_random_headers(
    station: dict[str, Any],
    path: str,
    who: str | None,
    auth: str | None,
    api_key: str | None,
    extra: dict[str, str],
) -> None:
    headers = {k: v for k, v in extra.items() if k != "Host" or v.strip()}
    headers.pop("Host", None)  # a Host the server does not serve is a proxy's concern
    if auth is not None:
        headers["Authorization"] = auth
    if api_key is not None:
        headers["X-API-Key"] = api_key
    if who is not None and auth is None:
        headers.update(_headers(station, who))
    got = station["client"].get(path, headers=headers)
    body = _check(got, (path, headers))
    if path == "/v1/forests" and got.status_code == 200:
        assert isinstance(body["forests"], list)
    if path != "/v1/forests":
        assert got.status_code == 200


def test_the_fuzz_reached_every_outcome() -> None:
    """The generated requests did get past each gate: successes, refused keys, schema
    errors, absent forests and nodes, forbidden writes."""
    seen = {status for status, _ in SEEN}
    assert {200, 400, 401, 404} <= seen, SEEN
    assert sum(SEEN.values()) > 500, SEEN
    assert SEEN[(200, "ok")] > 20, SEEN


def test_the_forest_is_sound_after_the_fuzz(station: dict[str, Any]) -> None:
    """Whatever the fuzz wrote through the admin key, the forest still validates and
    nothing escaped it (run last in this module)."""
    from monkeyllm.validate import validate

    root: Path = station["root"]
    errors = [f for f in validate(root / "acme") if f.severity == "error"]
    assert errors == [], errors[:3]
    assert not (root.parent / "outside").exists()


def test_a_revoked_key_is_refused_on_the_very_next_request(station: dict[str, Any]) -> None:
    """The Station keeps verified keys briefly; a revocation still holds at once, whether
    the CLI makes it from another process or another connection makes it here."""
    import subprocess
    import sys

    from monkeyllm.serve.station import keys

    root: Path = station["root"]
    args = json.dumps({"id": "sales/exchange-policy"}).encode()
    vine = Path(sys.executable).parent / "vine"
    for how in ("cli", "store"):
        key_id, key = _key(root, f"short-{how}")
        station[f"short-{how}"] = key
        for _ in range(3):  # verified, then cached
            assert _post(station, "acme", "look", args, f"short-{how}").status_code == 200
        if how == "cli" and vine.exists():
            done = subprocess.run(
                [str(vine), "station", "key", "revoke", key_id, "--root", str(root)],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
        else:
            with Store(root) as store:
                assert keys.revoke(store, key_id)
        got = _post(station, "acme", "look", args, f"short-{how}")
        assert got.status_code == UNAUTHORIZED, (how, got.text)
    assert _post(station, "acme", "look", args, "admin").status_code == 200


# -- the same calls as MCP tools --------------------------------------------------------


def _tool_args(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A tool's arguments: the route's body shapes plus ``forest`` (the real one most
    of the time, else anything)."""
    schema = STATION_CALLS[name].input_schema()
    forest = st.one_of(st.just("acme"), st.just("acme"), FOREST, JUNK)
    return st.tuples(shaped(schema), forest, st.integers(0, 5)).map(
        lambda t: {**t[0], "forest": t[1]} if t[2] else t[0]
    )


@pytest.mark.parametrize("who", ["admin", "scoped"])
@pytest.mark.parametrize("name", sorted(STATION_CALLS))
@settings(FUZZ, max_examples=2)
@given(data=st.data())
def test_every_station_mcp_tool_answers_random_arguments(
    station: dict[str, Any], name: str, who: str, data: st.DataObject
) -> None:
    """Over the SDK's real client: every tool answers a result or an envelope (isError
    set exactly for one), never E_INTERNAL, the engine's calls within their budget."""
    import anyio

    from monkeyllm import budget

    from .mcpkit import http_session

    batch = data.draw(st.lists(_tool_args(name), min_size=6, max_size=6))

    async def calls() -> list[tuple[Any, Any]]:
        async with http_session(
            str(station["client"].base_url) + "/mcp", headers=_headers(station, who)
        ) as client:
            return [(args, await client.call_tool(name, args)) for args in batch]

    for args, result in anyio.run(calls):
        (block,) = [c for c in result.content if c.type == "text"]
        out = json.loads(block.text)
        assert isinstance(out, dict), (name, args, out)
        assert result.is_error == ("error" in out and set(out) == {"error"}), (args, out)
        if result.is_error:
            assert out["error"]["code"] != "E_INTERNAL", (name, args, out)
        limit = STATION_CALLS[name].budget
        if limit is not None and not result.is_error:
            shown = {k: v for k, v in out.items() if k != "trace"}
            assert budget.cost(shown) <= limit, (name, args, budget.cost(shown))
