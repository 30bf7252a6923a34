"""Schemathesis hooks for the Station run (loaded through SCHEMATHESIS_HOOKS): what a
JSON Schema cannot say about a *valid* request, taught to the generator.

The OpenAPI document is strict about shapes, bounds and closed sets, and every request
it refuses the Station refuses too. Some validity is about the forest itself, not the
request's shape: a SQL statement has to parse and name real tables, a planted node's
type and rels come from the forest's dialect and its parent is the branch its id sits
in, move's rel is one the dialect declares, and a branch's body is not replaced nor a
branch moved or pruned while it holds nodes. So the positive cases of query, tend,
plant, graft, move, prune and transplant carry real statements, a real parent, type and
rel, and aim at leaves (the forest pinned), and can be sent twice (Schemathesis replays
a case: plant is then if_absent, tend only updates and deletes, transplant and a pruned
branch rehearse); everything else, and every negative case, is what Schemathesis
generated.
"""

from __future__ import annotations

import itertools
import zlib
from typing import Any

import schemathesis

SELECTS = [
    "SELECT region, COUNT(*) AS orders FROM orders GROUP BY region",
    "SELECT * FROM orders LIMIT 5",
    "SELECT COUNT(*) FROM orders",
    "SELECT customer, SUM(value_cents) AS cents FROM orders GROUP BY customer "
    "ORDER BY cents DESC LIMIT 3",
    "SELECT id, closed_at FROM orders WHERE region = 'South' ORDER BY closed_at",
    "WITH s AS (SELECT * FROM orders WHERE value_cents > 100000) SELECT COUNT(*) FROM s",
]
# Statements that can run any number of times: Schemathesis may send a case again.
WRITES = [
    "UPDATE orders SET region = 'South' WHERE id = '1001'",
    "UPDATE orders SET value_cents = value_cents WHERE id = '1002'",
    "UPDATE orders SET customer = customer WHERE region = 'North'",
    "DELETE FROM orders WHERE id = 'no-such-order'",
]
DATASET = "sales/orders-2026"
RELS = ["children", "related-to", "mentioned-in", "mentions", "part-of", "supersedes"]
_fresh = itertools.count(1)


def _pick(options: list[str], seed: Any) -> str:
    return options[zlib.crc32(repr(seed).encode()) % len(options)]


def _node(node: dict[str, Any]) -> dict[str, Any]:
    """A generated node made plantable here: a fresh id under sales, a dialect type,
    its links to real nodes along a real rel; no dataset parts (a dataset's tables are
    data the generator cannot invent)."""
    out = {k: v for k, v in node.items() if k not in ("schema", "rows")}
    out.update(id=f"sales/fuzz-{next(_fresh)}", parent="sales/_index", type="note")
    if isinstance(out.get("links"), list):
        out["links"] = [
            {"rel": "related-to", "target": "sales/orders-2026"} for _ in out["links"][:3]
        ]
    return out


def _links(links: Any) -> Any:
    if not isinstance(links, list):
        return links
    return [{"rel": "related-to", "target": "sales/orders-2026"} for _ in links[:3]]


def _branchy(node_id: Any) -> bool:
    """An index or a system node: what prune and transplant refuse by its kind."""
    if not isinstance(node_id, str):
        return False
    bare = node_id.strip().strip("/").removesuffix(".md")
    return bare.endswith("_index") or bare.startswith("_meta")


@schemathesis.hook
def map_case(ctx: Any, case: Any) -> Any:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or not isinstance(case.body, dict):
        return case
    call = case.operation.path.rsplit("/", 1)[-1]
    body = dict(case.body)
    if call == "query":
        body.update(id=DATASET, sql=_pick(SELECTS, body.get("sql")))
    elif call == "tend":
        body.update(id=DATASET, sql=_pick(WRITES, body.get("sql")))
    elif call == "plant":
        node = body.get("node")
        body["node"] = [_node(n) for n in node] if isinstance(node, list) else _node(node)
        # A case sent again finds its node planted: that answers created=false.
        body["if_absent"] = True
    elif call == "move" and body.get("rel") is not None:
        body["rel"] = _pick(RELS, body["rel"])
    elif call == "transplant":
        # A fresh place under a real branch; rehearsed, so that a case sent again (or
        # the next one) finds the forest as it was.
        body.update(new_id=f"sales/moved-{next(_fresh)}", dry_run=True)
        if _branchy(body.get("id")):
            body["id"] = "sales/price-list"
    elif call == "prune" and _branchy(body.get("id")):
        body.update(id="sales/discount-ladder", dry_run=True)
    elif call == "graft" and isinstance(body.get("patch"), dict):
        patch = dict(body["patch"])
        for key in ("add_links", "remove_links"):
            if key in patch:
                patch[key] = _links(patch[key])
        target = body.get("id")
        if (
            isinstance(target, str)
            and target.rstrip("/").endswith("_index")
            and "replace_body" in patch
        ):
            # A branch's body is its index, which plant and summaries keep.
            if len(patch) > 1:
                patch.pop("replace_body")
            else:
                body["id"] = "sales/exchange-policy"
        body["patch"] = patch
    case.body = body
    return case
