"""A node's kind, in one table: a branch (``type: branch``, an ``_index.md`` listing a
region) or a leaf, which the catalog and every response call a ``banana``, whatever
its type (note, document, dataset, entity, media...).

A request may name leaves in the words people use: locate's scope ``notes`` (or
``bananas``) and scan's filter ``kind: note`` (or ``banana``) mean every leaf, not only
nodes of type ``note``.
"""

from __future__ import annotations

BRANCH = "branch"
BANANA = "banana"

# locate's scope -> the catalog kind it keeps (None: both).
SCOPES: dict[str, str | None] = {
    "all": None,
    "branches": BRANCH,
    "notes": BANANA,
    "bananas": BANANA,
}
# scan's ``kind`` filter -> the catalog kind it keeps.
FILTER_KINDS: dict[str, str] = {"note": BANANA, "banana": BANANA, "branch": BRANCH}


def kind_of(node_type: object) -> str:
    """The kind of a node of this ``type``: ``branch`` for a branch, else ``banana``."""
    return BRANCH if node_type == BRANCH else BANANA
