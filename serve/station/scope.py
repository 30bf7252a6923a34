"""What a scoped key sees: engine calls with their arguments checked against the key's
subtrees and their responses cut to the visible nodes. The engine knows nothing of
principals; this layer wraps each call by the shape of its response.

- An id outside the scope answers the same ``E_NOT_FOUND`` as an absent id.
- Results, edges, children, cross trails, trails, neighbours and batch members that
  name a hidden node are dropped; counts are recomputed from what is left.
- locate, sniff and harvest over-fetch, keep the visible results and cut to ``k``.
- Bodies (pick, harvest content) lose the lines that link to a hidden node (an
  index's entry lines, a note's wikilinks).
- Writes aimed outside the scope, or linking into hidden nodes, answer ``E_FORBIDDEN``.
- calendar, coverage, history, prune and transplant run inside the key's prefixes
  (:meth:`monkeyllm.Vine.visibility`): their counts cover visible nodes only, history
  names no hidden node, and a prune or transplant that would have to rewrite a hidden
  node refuses with ``E_ANCHORED`` and only a count of those nodes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monkeyllm.errors import VineError, is_error
from monkeyllm.forest import coverage_phrase, not_found
from monkeyllm.ids import branch_id, is_index, normalize, parent_of

Engine = Callable[[str, dict[str, Any]], dict[str, Any]]
_LINK = re.compile(r"\[\[([^\]|#]+)")
_WINDOW_EXTRAS = ("searched", "matched_window", "undated_excluded")
SNIFF_K_MAX = 20
LOCATE_K_MAX = 50
SWEEP_PAGES = 200


# The existing ids nearest to a mistyped one, among those a predicate keeps
# (``Vine.near``): what an E_NOT_FOUND suggests.
Near = Callable[[str, Callable[[str], bool]], list[str]]
_NODE_NOT_FOUND = "node not found: "


class Scope:
    """One call's view of a forest through a key's policy."""

    def __init__(self, policy: Any, root: Path, near: Near | None = None) -> None:
        self.policy = policy
        self.root = root
        self.near = near

    def visible(self, node_id: Any) -> bool:
        return isinstance(node_id, str) and self.policy.in_scope(node_id)

    def missing(self, node_id: str) -> VineError:
        """The ``E_NOT_FOUND`` of an id that is hidden or absent, the same for both: its
        suggestions are the nearest visible ids (none when they cannot be looked up)."""
        try:
            near = self.near(node_id, self.visible) if self.near is not None else []
        except VineError:
            near = []
        return not_found(node_id, near)

    def check(self, raw: Any) -> None:
        """Refuse a hidden id exactly as the engine refuses an absent one; ids the
        engine would refuse anyway pass through to it."""
        try:
            node_id = normalize(raw)
        except VineError:
            return
        if not self.visible(node_id):
            raise self.missing(node_id)

    def branch(self, raw: Any) -> Any:
        """The node a ``scope``/``parent_id`` names (a leaf when one exists, else the
        branch), refused like an absent branch when hidden."""
        if raw is None or raw == "":
            return raw  # the whole forest, cut to the visible part afterwards
        if raw == "_index":
            if not self.visible("_index"):
                raise self.missing("_index")
            return raw
        try:
            node_id = normalize(raw, param="scope")
        except VineError:
            return raw
        # os.path.isfile answers False for a name the file system refuses (too long).
        if not is_index(node_id) and os.path.isfile(self.root / f"{node_id}.md"):
            if self.visible(node_id):
                return raw
            raise self.missing(branch_id(node_id))
        if not self.visible(branch_id(node_id)):
            raise self.missing(branch_id(node_id))
        return raw

    def body(self, text: str) -> str:
        """A body without the lines that link to hidden nodes."""
        lines = text.split("\n")
        kept = [line for line in lines if all(self.visible(m.strip()) for m in _LINK.findall(line))]
        return text if len(kept) == len(lines) else "\n".join(kept)

    def snippet(self, match: Any) -> bool:
        """True when a match's snippet names no hidden node (a window that cuts a link
        in half cannot be checked, so it is not shown)."""
        text = match.get("snippet") if isinstance(match, dict) else None
        if not isinstance(text, str):
            return True
        opens, closes = text.find("[["), text.find("]]")
        if closes != -1 and (opens == -1 or closes < opens):
            return False
        if text.count("[[") != text.count("]]"):
            return False
        return all(self.visible(m.strip()) for m in _LINK.findall(text))

    def clean(self, value: Any) -> Any:
        """Trails without hidden ids and bodies without hidden links, everywhere."""
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "trail" and isinstance(item, list):
                    out[key] = [t for t in item if self.visible(t)]
                elif key == "body" and isinstance(item, str):
                    out[key] = self.body(item)
                else:
                    out[key] = self.clean(item)
            return out
        if isinstance(value, list):
            return [self.clean(v) for v in value]
        return value

    def digest(self, d: dict[str, Any]) -> dict[str, Any]:
        """A look digest without hidden edges, children or cross trails."""
        d = dict(d)
        removed = False
        for key, end in (("edges_out", "target"), ("edges_in", "source")):
            if isinstance(d.get(key), list):
                kept = [e for e in d[key] if self.visible(e.get(end))]
                removed |= len(kept) != len(d[key])
                d[key] = kept
        if removed and isinstance(d.get("stats"), dict) and "degree" in d["stats"]:
            d["stats"] = {
                **d["stats"],
                "degree": len(d.get("edges_out", [])) + len(d.get("edges_in", [])),
            }
        if isinstance(d.get("children"), list):
            kept = [c for c in d["children"] if self.visible(c.get("id"))]
            if len(kept) != len(d["children"]) and "coverage" in d:
                branches = sum(1 for c in kept if is_index(c["id"]))
                d["coverage"] = coverage_phrase(len(kept) - branches, branches)
            d["children"] = kept
        if isinstance(d.get("cross_trails"), list):
            d["cross_trails"] = [
                t
                for t in d["cross_trails"]
                if not isinstance(t, str) or all(self.visible(m.strip()) for m in _LINK.findall(t))
            ]
        return d


def run(
    policy: Any,
    root: Path,
    call: str,
    args: dict[str, Any],
    engine: Engine,
    near: Near | None = None,
) -> dict[str, Any]:
    """Run one call as the key sees the forest; ``near`` (``Vine.near``) lets a node
    that is not found suggest the nearest visible ids, hidden or absent alike."""
    if not policy.restricted:
        return engine(call, args)
    scope = Scope(policy, root, near)
    out = _HANDLERS.get(call, _by_id)(scope, call, args, engine)
    if is_error(out):
        err = out["error"]
        moved = err.get("moved_to")
        if err.get("code") == "E_MOVED" and not scope.visible(moved):
            raise scope.missing(normalize(args.get("id")))
        message = err.get("message")
        if (
            err.get("code") == "E_NOT_FOUND"
            and isinstance(message, str)
            and message.startswith(_NODE_NOT_FOUND)
        ):
            # The engine's suggestions may name hidden ids: say it as a hidden id is said.
            return scope.missing(message[len(_NODE_NOT_FOUND) :]).envelope()
        return out
    return scope.clean(out)


def _by_id(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    s.check(args.get("id"))
    return engine(call, args)


def _move(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    out = _by_id(s, call, args, engine)
    if not is_error(out):
        out["neighbors"] = [n for n in out.get("neighbors", []) if s.visible(n.get("id"))]
    return out


def _batch(
    s: Scope,
    call: str,
    args: dict[str, Any],
    engine: Engine,
    each: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    ids = args.get("id")
    if not isinstance(ids, list):
        out = _by_id(s, call, args, engine)
        return out if is_error(out) else each(out)
    if not ids or not all(isinstance(i, str) for i in ids):
        return engine(call, args)
    order: list[str] = []
    for raw in ids:
        try:
            node_id = normalize(raw)
        except VineError:
            node_id = raw
        if node_id not in order:
            order.append(node_id)
    shown = [i for i in order if s.visible(i)]
    if not shown:
        if len(ids) > (10 if call == "look" else 5):
            return engine(call, args)
        return {"nodes": [], "missing": order, "dropped": [], "truncated": False}
    out = engine(call, {**args, "id": shown})
    if is_error(out):
        return out
    out["nodes"] = [each(n) for n in out.get("nodes", []) if s.visible(n.get("id"))]
    missing = set(out.get("missing", [])) | {i for i in order if not s.visible(i)}
    out["missing"] = [i for i in order if i in missing]
    return out


def _look(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    return _batch(s, call, args, engine, s.digest)


def _pick(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    return _batch(s, call, args, engine, lambda n: n)


def _ranked(s: Scope, out: dict[str, Any], k: int) -> tuple[list[dict[str, Any]], bool]:
    visible = []
    for r in out.get("results", []):
        if not s.visible(r.get("id")):
            continue
        matches = r.get("matches")
        if isinstance(matches, list) and matches:
            kept = [m for m in matches if s.snippet(m)]
            if not kept:
                continue  # it matched only where it names a hidden node
            if len(kept) != len(matches):
                r = dict(r, matches=kept)
                if isinstance(r.get("match_count"), int):
                    r["match_count"] -= len(matches) - len(kept)
        visible.append(r)
    for extra in _WINDOW_EXTRAS:
        out.pop(extra, None)
    return visible[:k], len(visible) > k or bool(out.get("truncated"))


def _locate(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    k = args.get("k", 5)
    wide = min(max(k, 1) * 8, LOCATE_K_MAX) if isinstance(k, int) else k
    out = engine(call, {**args, "k": wide})
    if is_error(out):
        return out
    results, truncated = _ranked(s, out, k)
    # A branch's coverage counts hidden children too: leave it out.
    out["results"] = [{key: v for key, v in r.items() if key != "coverage"} for r in results]
    out["truncated"] = truncated
    return out


def _sniff(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    s.branch(args.get("scope"))
    k = args.get("k", 5)
    wide = min(max(k, 1) * 8, SNIFF_K_MAX) if isinstance(k, int) else k
    out = engine(call, {**args, "k": wide})
    if is_error(out):
        return out
    out["results"], out["truncated"] = _ranked(s, out, k)
    out["scanned_nodes"] = len(out["results"])
    return out


def _scan(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    s.branch(args.get("parent_id"))
    fields = args.get("fields")
    limit = args.get("limit", 50)
    if not isinstance(limit, int) or isinstance(limit, bool):
        return engine(call, args)
    asked = dict(args, limit=50)
    if isinstance(fields, list) and "id" not in fields:
        asked["fields"] = ["id", *fields]
    out = engine(call, asked)
    if is_error(out):
        return out
    every = _sweep(s, args, engine)
    nodes = [n for n in out.get("nodes", []) if s.visible(n.get("id"))][: max(limit, 0)]
    after = args.get("after")
    if after is not None:
        last = nodes[-1]["id"] if nodes else after
        more = any(i > last for i in every)
    else:
        more = len(every) > len(nodes)
    out.pop("hint", None)
    out.pop("next", None)
    out.update(nodes=nodes, total=len(every), returned=len(nodes), truncated=more)
    if after is not None and more and nodes:
        out["next"] = last
    return out


def _sweep(s: Scope, args: dict[str, Any], engine: Engine) -> list[str]:
    """Every visible id the scan matches, paging the engine by id."""
    ask = {key: v for key, v in args.items() if key not in ("fields", "limit", "after")}
    seen: list[str] = []
    after = ""
    for _ in range(SWEEP_PAGES):
        page = engine("scan", {**ask, "fields": ["id"], "limit": 50, "after": after})
        if is_error(page):
            break
        seen += [n["id"] for n in page.get("nodes", []) if s.visible(n.get("id"))]
        after = page.get("next")
        if not after:
            break
    return seen


def _harvest(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    from monkeyllm.reads.harvest import max_k

    k = args.get("k", 3)
    out = engine(call, {**args, "k": max_k()}) if isinstance(k, int) else engine(call, args)
    if is_error(out):
        return out
    results, truncated = _ranked(s, out, max(min(k, max_k()), 1))
    for r in results:
        for key in ("supersedes", "superseded_by"):
            if isinstance(r.get(key), list):
                r[key] = [i for i in r[key] if s.visible(i)]
    out["results"], out["truncated"] = results, truncated
    if isinstance(out.get("superseded_excluded"), list):
        out["superseded_excluded"] = [
            e
            for e in out["superseded_excluded"]
            if s.visible(e.get("id") if isinstance(e, dict) else e)
            and (not isinstance(e, dict) or s.visible(e.get("by")))
        ]
        if not out["superseded_excluded"]:
            out.pop("superseded_excluded")
    if isinstance(out.get("searched"), dict):
        out["searched"] = {**out["searched"], "nodes": len(results)}
    return out


def _links(s: Scope, links: Any) -> None:
    for link in links if isinstance(links, list) else []:
        target = link.get("target") if isinstance(link, dict) else None
        if isinstance(target, str) and not s.visible(_canonical(target)):
            raise s.policy.refuse_write(target)


def _canonical(raw: str) -> str:
    try:
        return normalize(raw)
    except VineError:
        return raw


def _plant(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    node = args.get("node")
    for spec in node if isinstance(node, list) else [node]:
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
            continue
        node_id = _canonical(spec["id"])
        parent = spec.get("parent")
        parents = [p for p in (parent_of(node_id), parent) if isinstance(p, str)]
        if not s.visible(node_id) or not all(s.visible(_canonical(p)) for p in parents):
            raise s.policy.refuse_write(node_id)
        _links(s, spec.get("links"))
    return engine(call, args)


def _graft(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    s.check(args.get("id"))
    patch = args.get("patch")
    if isinstance(patch, dict):
        _links(s, patch.get("add_links"))
        _links(s, patch.get("remove_links"))
    out = engine(call, args)
    if not is_error(out) and isinstance(out.get("fortified"), list):
        out["fortified"] = [
            f for f in out["fortified"] if not isinstance(f, dict) or s.visible(f.get("target"))
        ]
    return out


def _scoped(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    """calendar and coverage: a hidden scope is an absent branch; the engine counts only
    what the key sees."""
    s.branch(args.get("scope"))
    return engine(call, args)


def _transplant(s: Scope, call: str, args: dict[str, Any], engine: Engine) -> dict[str, Any]:
    """The source is gated like a read, the destination like a plant."""
    s.check(args.get("id"))
    raw = args.get("new_id")
    if isinstance(raw, str):
        new_id = _canonical(raw)
        parent = parent_of(new_id)
        if not s.visible(new_id) or (parent is not None and not s.visible(parent)):
            raise s.policy.refuse_write(new_id)
    return engine(call, args)


_HANDLERS: dict[str, Callable[[Scope, str, dict[str, Any], Engine], dict[str, Any]]] = {
    "locate": _locate,
    "look": _look,
    "move": _move,
    "pick": _pick,
    "scan": _scan,
    "sniff": _sniff,
    "harvest": _harvest,
    "query": _by_id,
    "tend": _by_id,
    "plant": _plant,
    "graft": _graft,
    "history": _by_id,
    "calendar": _scoped,
    "coverage": _scoped,
    "prune": _by_id,
    "transplant": _transplant,
}
