"""Budgets as properties for move (600), scan (800), sniff (800), query (2000) and pick
(4000; a single named section has no cap): every response fits and says when it was
cut."""

from __future__ import annotations

from typing import Any, get_args

from hypothesis import example, given
from hypothesis import strategies as st

from monkeyllm.argtypes import ScanField
from monkeyllm.budget import cost

from ..forestkit import body_offset, sql_rows
from .kit import (
    ELLIPSIS,
    INVERSE,
    MOVE,
    NODE_IDS,
    PICK,
    QUERY,
    RELS,
    SCAN,
    SETTINGS,
    SNIFF,
    WIDE_COLS,
    WORDS,
    Model,
    _tokens,
    fits,
    no_internal,
    parent_of,
)


def _move_total(model: Model, node_id: str, rel: str | None, direction: str) -> int:
    if rel == "children":
        return len(model.children[node_id])

    def hit(stored: str) -> bool:
        return rel is None or rel in (stored, INVERSE.get(stored))

    n = 0
    if direction in ("out", "both"):
        n += sum(hit(r) for r, _ in model.out_links[node_id])
    if direction in ("in", "both"):
        n += sum(hit(r) for r, _ in model.in_links[node_id])
    return n


@SETTINGS
@given(data=st.data())
def test_move_fits_and_never_hides_a_cut(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(NODE_IDS)
    rel = data.draw(
        st.sampled_from([None, "children", *RELS, "contains", "mentions", "superseded-by", "nope"])
    )
    direction = data.draw(st.sampled_from(["out", "in", "both"]))
    out = model.vine.move(node_id, rel=rel, direction=direction)
    no_internal(out)
    fits(out, MOVE)
    if node_id not in model.meta:
        assert out["error"]["code"] == "E_NOT_FOUND"
        return
    if rel == "nope":
        assert out["error"]["code"] == "E_SCHEMA"  # a rel the dialect does not declare
        return
    total = _move_total(model, node_id, rel, direction)
    assert len(out["neighbors"]) <= total
    assert out["truncated"] is (len(out["neighbors"]) < total), (len(out["neighbors"]), total)
    if out["truncated"]:
        assert "hint" in out
    for n in out["neighbors"]:
        assert n["summary"] == model.summary(n["id"])
        if n["direction"] == "in":
            assert n["rel"] in {INVERSE.get(r) or r for r, _ in model.in_links[node_id]}


# scan's fields but those the model does not keep.
SCAN_FIELDS = [
    f
    for f in get_args(ScanField)
    if f not in {"source", "entity_kind", "payload_type", "coverage", "origin"}
]


def _scan_scope(model: Model, index: str, recursive: bool) -> list[str]:
    if not recursive:
        return [i for i in model.ids if parent_of(i) == index]
    if index == "_index":
        return [i for i in model.ids if i != "_index"]
    prefix = index[: -len("_index")]
    return [i for i in model.ids if i.startswith(prefix) and i != index]


@SETTINGS
@given(data=st.data())
def test_scan_fits_and_never_hides_a_cut(model: Model, data: st.DataObject) -> None:
    index = data.draw(st.sampled_from(model.branches))
    parent = data.draw(st.sampled_from([index, index.removesuffix("/_index")]))
    fields = data.draw(
        st.one_of(
            st.none(), st.lists(st.sampled_from(SCAN_FIELDS), min_size=1, max_size=8, unique=True)
        )
    )
    recursive = data.draw(st.booleans())
    limit = data.draw(st.integers(1, 50))
    word = data.draw(st.sampled_from(WORDS))
    filt = data.draw(
        st.sampled_from(
            [None, {"type": "note"}, {"tags_any": [word]}, {"kind": "branch"}, {"kind": "note"}]
        )
    )
    cursor = data.draw(st.sampled_from([None, ""]))
    out = model.vine.scan(
        parent, filter=filt, fields=fields, recursive=recursive, limit=limit, after=cursor
    )
    no_internal(out)
    fits(out, SCAN)
    scope = _scan_scope(model, index, recursive)
    if filt and "type" in filt:
        scope = [i for i in scope if model.meta[i].get("type") == filt["type"]]
    if filt and "tags_any" in filt:
        scope = [i for i in scope if word in (model.meta[i].get("tags") or [])]
    if filt and "kind" in filt:
        want_branch = filt["kind"] == "branch"
        scope = [i for i in scope if model.is_branch(i) is want_branch]
    got = [n["id"] for n in out["nodes"]]
    assert out["total"] == len(scope)
    assert set(got) <= set(scope) and len(got) == len(set(got)) <= limit
    assert out["returned"] == len(got)
    assert out["truncated"] is (len(got) < len(scope)), (len(got), len(scope))
    if cursor == "":
        assert got == sorted(got) == sorted(scope)[: len(got)]
    for n in out["nodes"]:
        if fields is None or "summary" in fields:
            assert n["summary"] == model.summary(n["id"])
        if fields is not None and "title" in fields:
            assert n["title"] == model.meta[n["id"]]["title"]


def _sniff_scope(model: Model, scope: str | None) -> list[str]:
    if scope is None:
        return model.ids
    if scope in model.meta and not model.is_branch(scope):
        return [scope]
    index = scope if scope.endswith("_index") else scope + "/_index"
    if index == "_index":
        return model.ids
    prefix = index[: -len("_index")]
    return [i for i in model.ids if i.startswith(prefix)]


@SETTINGS
@given(data=st.data())
def test_sniff_fits_and_snippets_are_real_windows(model: Model, data: st.DataObject) -> None:
    terms = data.draw(
        st.lists(
            st.sampled_from(
                [*WORDS, "zebrafish harbor", "ZEBRAFISH", "line 3.1", "nomatchword", "part 2 of"]
            ),
            min_size=1,
            max_size=4,
        )
    )
    scope = data.draw(
        st.sampled_from(
            [None, "big", "big/_index", "graph", "docs", "docs/manual", "big/n07", "_index"]
        )
    )
    k = data.draw(st.integers(1, 20))
    out = model.vine.sniff(terms, scope=scope, k=k)
    no_internal(out)
    fits(out, SNIFF)
    folded = list(dict.fromkeys(t.lower() for t in terms))
    in_scope = _sniff_scope(model, scope)
    matching: dict[str, list[int]] = {}
    for node_id in in_scope:
        lines = [
            n
            for n, line in enumerate(model.body[node_id].split("\n"), 1)
            if any(t in line.lower() for t in folded)
        ]
        if lines:
            matching[node_id] = lines
    assert out["scanned_nodes"] == len(in_scope)
    got = [r["id"] for r in out["results"]]
    assert set(got) <= set(matching) and len(got) <= k
    assert out["truncated"] is (len(got) < len(matching)), (len(got), len(matching))
    for r in out["results"]:
        lines = model.body[r["id"]].split("\n")
        assert r["match_count"] == len(matching[r["id"]])
        assert r["truncated_matches"] is (r["match_count"] > 3)
        assert len(r["matches"]) == min(3, r["match_count"])
        off = body_offset(model.vine.root, r["id"])  # match lines are file lines
        for m in r["matches"]:
            assert m["line"] - off in matching[r["id"]]
            snippet = m["snippet"]
            assert len(snippet) <= 102, snippet
            assert snippet.strip(ELLIPSIS) in lines[m["line"] - off - 1]


WIDE_NAMES = ["id", *(f"c{c:02d}_{'x' * 10}" for c in range(WIDE_COLS))]


def _direct(model: Model, sql: str) -> list[list[Any]]:
    return sql_rows(model.root / "data" / "wide.db", sql)


@SETTINGS
@given(
    cols=st.lists(st.sampled_from(WIDE_NAMES), min_size=1, max_size=WIDE_COLS, unique=True),
    below=st.integers(0, 320),
    limit=st.one_of(st.none(), st.integers(0, 320)),
    alias=st.one_of(st.just(0), st.integers(0, 700)),
)
@example(cols=WIDE_NAMES, below=320, limit=None, alias=0)
@example(cols=WIDE_NAMES[:20], below=320, limit=None, alias=330)
def test_query_fits_and_keeps_whole_rows(
    model: Model, cols: list[str], below: int, limit: int | None, alias: int
) -> None:
    names = [f"a{i}_{'y' * alias}" if alias else c for i, c in enumerate(cols)]
    shown = ", ".join(f"{c} AS {n}" if alias else c for c, n in zip(cols, names, strict=True))
    sql = f"SELECT {shown} FROM wide WHERE id <= {below} ORDER BY id"
    if limit is not None:
        sql += f" LIMIT {limit}"
    out = model.vine.query("data/wide", sql)
    no_internal(out)
    fits(out, QUERY)
    if "error" in out:
        # only a statement whose column names alone cannot fit may be refused
        assert out["error"]["code"] == "E_QUERY_INVALID", out
        assert cost({"columns": names}) > QUERY - 200, out
        return
    truth = _direct(model, sql if limit is not None else sql + " LIMIT 200")
    assert out["columns"] == names
    assert out["row_count"] == len(out["rows"])
    assert out["rows"] == truth[: len(out["rows"])]
    if len(out["rows"]) < len(truth):
        assert out.get("truncated") is True or out["limited"] is True
    if out.get("truncated"):
        assert "exist" in out["hint"] and f"{len(cols)} column" in out["hint"]
    else:
        assert "hint" not in out
        assert out["rows"] == truth[:200]


PICKABLE = [
    "docs/manual",
    "docs/paragraph",
    "docs/short",
    "misc/long-title",
    "big/n00",
    "big/n41",
    "graph/hub",
    "data/wide",
    "big/_index",
]


@SETTINGS
@given(data=st.data())
def test_pick_whole_body_fits_or_gives_a_map(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from([*PICKABLE, *model.ids]))
    out = model.vine.pick(node_id)
    no_internal(out)
    fits(out, PICK)
    body = model.body[node_id]
    assert out["body_tokens"] == _tokens(body)
    if out["truncated"]:
        assert "body" not in out or out["body"] in model.text[node_id]
        assert out["outline"] == model.outline(node_id)[: len(out["outline"])]
        assert "section" in out["hint"]
    else:
        assert out["body"] == body
        assert out["body"] in model.text[node_id]


@SETTINGS
@given(data=st.data())
def test_pick_a_named_section_is_exact_and_uncapped(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(
        st.sampled_from(["docs/manual", "big/n03", "misc/long-title", "data/wide", "docs/short"])
    )
    outline = model.outline(node_id)
    name = data.draw(st.sampled_from(outline))
    spelled = data.draw(st.sampled_from([name, name.lower(), name.upper(), "## " + name]))
    out = model.vine.pick(node_id, section=spelled)
    no_internal(out)
    assert out["truncated"] is False
    assert out["body"] in model.text[node_id]
    assert (
        out["body"]
        .split("\n", 1)[0]
        .lstrip("#")
        .strip()
        .lower()
        .startswith(name.lower()[: len(out["section"])])
    )
    assert out["body_tokens"] == _tokens(out["body"])


@SETTINGS
@given(data=st.data())
def test_pick_section_lists_fit_and_partition(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from(["docs/manual", "big/n10", "misc/long-title"]))
    names = data.draw(
        st.lists(
            st.sampled_from([*model.outline(node_id), "No such section"]), min_size=1, max_size=10
        )
    )
    out = model.vine.pick(node_id, section=names)
    no_internal(out)
    fits(out, PICK)
    unique = list(dict.fromkeys(names))
    got = [s["section"] for s in out["sections"]]
    assert sorted(got + out["missing"] + out["dropped"]) == sorted(unique)
    assert out["truncated"] is bool(out["dropped"])
    for s in out["sections"]:
        assert s["body"] in model.text[node_id]


@SETTINGS
@given(data=st.data())
def test_pick_pages_fit_and_join_back(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from(PICKABLE))
    body = model.body[node_id]
    cursor: str | None = ""
    pages = []
    for _ in range(100):
        out = model.vine.pick(node_id, after=cursor)
        no_internal(out)
        fits(out, PICK)
        pages.append(out)
        if not out["truncated"]:
            break
        assert out["next"] != cursor
        cursor = out["next"]
    assert not pages[-1]["truncated"]
    if any(p.get("cut") for p in pages):
        for p in pages:
            core = p["body"].removesuffix(ELLIPSIS) if p.get("cut") else p["body"]
            assert core.rstrip() in body
    else:
        assert "".join(p["body"] for p in pages) == body


@SETTINGS
@given(data=st.data())
def test_pick_batch_fits(model: Model, data: st.DataObject) -> None:
    ids = data.draw(st.lists(st.sampled_from([*PICKABLE, "no/such"]), min_size=1, max_size=5))
    out = model.vine.pick(ids)
    no_internal(out)
    fits(out, PICK)
    unique = list(dict.fromkeys(ids))
    got = [n["id"] for n in out["nodes"]]
    assert sorted(got + out["missing"] + out["dropped"]) == sorted(unique)
    for n in out["nodes"]:
        if "body" in n and not n.get("truncated"):
            assert n["body"] == model.body[n["id"]]
