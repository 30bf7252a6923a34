"""What one key may do on its forest: capabilities and the subtrees it sees.

``in_scope(id)``: under no deny prefix, and either the whole forest is allowed or the
id is under some allow prefix. Prefixes end in ``/``; ``""`` is the whole forest.
"""

from __future__ import annotations

from dataclasses import dataclass

from monkeyllm.errors import Forbidden
from monkeyllm.visibility import Visibility

CAPS = ("read", "query", "write", "tend", "answer", "admin")
# The capability each call needs (admin implies every one).
NEEDS = {
    "locate": "read",
    "look": "read",
    "move": "read",
    "pick": "read",
    "scan": "read",
    "sniff": "read",
    "harvest": "read",
    "history": "read",
    "calendar": "read",
    "coverage": "read",
    "query": "query",
    "tend": "tend",
    "plant": "write",
    "graft": "write",
    "prune": "write",
    "transplant": "write",
    "answer": "answer",
}


@dataclass(frozen=True)
class Policy:
    """A grant on one forest."""

    forest: str
    allow: tuple[str, ...] = ("",)
    deny: tuple[str, ...] = ()
    caps: frozenset[str] = frozenset({"read"})

    @property
    def subtrees(self) -> Visibility:
        """The key's allow and deny prefixes as the engine's visibility rule."""
        return Visibility(self.allow, self.deny)

    @property
    def whole(self) -> bool:
        """True when the allow list covers the whole forest."""
        return self.subtrees.whole

    @property
    def restricted(self) -> bool:
        """True when some node of the forest is hidden from this key."""
        return self.subtrees.restricted

    def in_scope(self, node_id: str) -> bool:
        """True when the key may see ``node_id``."""
        if any(node_id.startswith(d) for d in self.deny if d):
            return False
        return self.whole or any(node_id.startswith(a) for a in self.allow)

    @property
    def roots(self) -> list[str]:
        """The index ids this key starts from."""
        return ["_index"] if self.whole else [a + "_index" for a in self.allow]

    def may(self, cap: str) -> bool:
        """True when the key holds ``cap`` (admin holds all)."""
        return cap in self.caps or "admin" in self.caps

    def require(self, call: str) -> None:
        """Refuse a call whose capability the key lacks (``E_FORBIDDEN``)."""
        cap = NEEDS.get(call, "admin")
        if not self.may(cap):
            raise Forbidden(
                f"forbidden (403): this key lacks the {cap!r} capability needed by {call}",
                hint=f"Ask the Station's operator for a key with caps including {cap}.",
                capability=cap,
            )

    def refuse_write(self, node_id: str) -> Forbidden:
        """The error for a write aimed outside the writable subtrees."""
        where = ", ".join(repr(a or "(the whole forest)") for a in self.allow) or "(none)"
        excluded = ", ".join(repr(d) for d in self.deny)
        hint = f"Writable subtrees: {where}" + (f", except {excluded}" if excluded else "")
        return Forbidden(
            f"forbidden (403): {node_id} is outside the subtrees this key may write",
            hint=hint + ".",
        )
