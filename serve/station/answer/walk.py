"""The walk: the model drives the read calls, one JSON tool call per turn, until it
answers. Plain chat is the protocol (no native tool calling needed): each turn the
model replies with ``{"tool": ..., "args": {...}}``, prose or code fences around it
tolerated, and the tool's JSON result comes back as the next user turn.

Only reads are on the list (never a write, whatever the key holds); ``query`` also
needs the key's ``query`` capability. The last turn is the deadline: the model must
answer there, and a walk that ends without an answer returns ``exhausted: true`` and
an empty answer, never a made-up one.
"""

from __future__ import annotations

import json
import time
from typing import Any

from monkeyllm.errors import Forbidden, VineError, is_error
from monkeyllm.ids import normalize as normalize_id
from monkeyllm.reads.terms import locate_query
from monkeyllm.registry import internal

from .. import scope
from . import cache, model, trace
from .ask import Ask, cache_parts
from .bindings import Binding

TOOLS = ("locate", "sniff", "look", "move", "pick", "scan", "query")
OPENS = ("look", "pick", "query")  # the tools whose ids count as evidence
WINDOWED = ("locate", "sniff", "scan")
FEED_CHARS = 12000  # a tool result as the model reads it
LOOK_FIELDS = ["title", "summary", "type"]

SYSTEM = """You answer a question by walking a knowledge forest with read-only tools.
Every turn, reply with exactly one JSON object and nothing else:
{{"tool": "<name>", "args": {{...}}}}
Tools:
- locate {{"query": str, "k": int}}: nodes whose title or summary match.
- sniff {{"terms": [str], "scope": id (optional), "k": int}}: exact strings in bodies.
- look {{"id": id or [ids]}}: a node's digest (summary, edges, children, dataset schema).
- move {{"id": id, "rel": str (optional), "direction": "out", "in" or "both"}}: neighbours.
- pick {{"id": id, "section": str (optional)}}: a node's body, or one section of it.
- scan {{"parent_id": id, "filter": {{...}} (optional), "recursive": bool}}: a branch's nodes.
- query {{"id": dataset id, "sql": "SELECT ..."}}: read-only SQL over a dataset's rows.
- answer {{"text": str, "answer_nodes": [ids]}}: your final answer.
Rules: answer only from what the tools returned, citing node ids in square brackets \
like [sales/exchange-policy]; when it does not hold the answer, say you do not know \
from this forest. Never repeat a call with the same arguments. Nothing can be \
written. You have {hops} turns in all; the answer must stay under {reply_tokens} tokens."""

DEADLINE = (
    "This is your last turn: answer now, from what you have read, with "
    '{"tool": "answer", "args": {"text": ..., "answer_nodes": [...]}}. Any other '
    "tool call ends the walk without an answer."
)
NUDGE_JSON = (
    'Reply with exactly one JSON object: {"tool": "<name>", "args": {...}}, '
    "one of: " + ", ".join(TOOLS) + ", answer."
)


def parse(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` that names a tool (fences and prose around it
    tolerated), as ``{"tool", "args"}``; None when there is none."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("tool"), str):
            args = obj.get("args")
            if not isinstance(args, dict):
                args = {k: v for k, v in obj.items() if k not in ("tool", "args")}
            return {"tool": obj["tool"].strip(), "args": args}
        start = text.find("{", start + 1)
    return None


def _feed(result: Any) -> str:
    text = json.dumps(result, ensure_ascii=False)
    return text if len(text) <= FEED_CHARS else text[:FEED_CHARS] + " …(cut)"


def _describe(result: dict[str, Any]) -> str:
    """A few words for a hop's ``out``."""
    if is_error(result):
        return "error " + str(result["error"].get("code"))
    for key, noun in (
        ("results", "results"),
        ("nodes", "nodes"),
        ("rows", "rows"),
        ("neighbors", "neighbours"),
    ):
        if isinstance(result.get(key), list):
            return f"{len(result[key])} {noun}"
    if "body" in result or "sections" in result:
        return "body"
    if result.get("type") == "dataset":
        return "dataset digest"
    return "digest" if "id" in result else "result"


def _ids(value: Any) -> list[str]:
    out = []
    for raw in value if isinstance(value, list) else [value]:
        if isinstance(raw, str):
            try:
                out.append(normalize_id(raw))
            except VineError:
                continue
    return out


class Walk:
    """One walk's state: the conversation, the hops, what was read and the meter."""

    def __init__(
        self, station: Any, who: Any, forest: str, ask: Ask, binding: Binding, root: Any
    ) -> None:
        self.who, self.ask, self.binding, self.root = who, ask, binding, root
        self.engine = trace.engine_for(station, forest)
        self.hops: list[dict[str, Any]] = []
        self.read: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.opened: list[str] = []
        self.seen: set[str] = set()
        self.usage = {"prompt": 0, "completion": 0, "calls": 0}
        self.model_ms = 0.0
        self.last_model_ms = 0.0
        self.forest_ms = 0.0

    def tool(self, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """One read as the key sees it: its result (or envelope) and milliseconds."""
        started = time.perf_counter()
        if name == "query" and not self.who.policy.may("query"):
            out = Forbidden(
                "forbidden (403): this key lacks the 'query' capability needed by query",
                hint="Answer from the prose you can read instead.",
            ).envelope()
        else:
            if name in WINDOWED and self.ask.window:
                args = {**self.ask.window, **args}
            try:
                out = scope.run(self.who.policy, self.root, name, args, self.engine)
            except VineError as exc:
                out = exc.envelope()
            except Exception as exc:  # noqa: BLE001 - the model's arguments are untrusted
                out = internal(name, exc)
        ms = round((time.perf_counter() - started) * 1000, 2)
        self.forest_ms += ms
        return out, ms

    def entry(self) -> dict[str, Any]:
        """The entry locate, dataset notes attached."""
        out, ms = self.tool("locate", {"query": locate_query(self.ask.question), "k": self.ask.k})
        self.steps.append({"step": "locate", "ms": ms, "tokens": _cost(out), "hop": 0})
        if is_error(out):
            return out
        datasets = [r["id"] for r in out.get("results", []) if r.get("type") == "dataset"]
        if datasets:
            looked, _ = self.tool("look", {"id": datasets[:10], "fields": ["notes"]})
            notes = (
                {n.get("id"): n.get("notes") for n in looked.get("nodes", []) if n.get("notes")}
                if not is_error(looked)
                else {}
            )
            for r in out.get("results", []):
                if notes.get(r.get("id")):
                    r["notes"] = notes[r["id"]]
        return out

    def say(self, messages: list[dict[str, str]], n: int) -> str:
        reply = model.chat(self.binding, messages, self.ask.max_tokens)
        self.usage["prompt"] += reply.prompt
        self.usage["completion"] += reply.completion
        self.usage["calls"] += 1
        self.model_ms += reply.ms
        self.steps.append(trace.model_step(reply.ms, self.binding.model, hop=n))
        self.last_model_ms = reply.ms
        return reply.text

    def run(self) -> dict[str, Any]:
        """Turns until an answer, the deadline, or exhaustion."""
        limit = self.ask.hops or 1
        entry = self.entry()
        if is_error(entry):
            return entry
        first = f"Question: {self.ask.question}\n\nEntry locate (JSON):\n{_feed(entry)}"
        messages = [
            {
                "role": "system",
                "content": SYSTEM.format(hops=limit, reply_tokens=self.ask.max_tokens),
            },
            {"role": "user", "content": first + ("\n\n" + DEADLINE if limit == 1 else "")},
        ]
        for n in range(1, limit + 1):
            text = self.say(messages, n)
            messages.append({"role": "assistant", "content": text})
            call = parse(text)
            last = n == limit
            if call is not None and call["tool"] == "answer":
                return self.finish(call["args"], n)
            feedback = self.turn(n, call, last)
            if last:
                break
            if n + 1 == limit:
                feedback += "\n\n" + DEADLINE
            messages.append({"role": "user", "content": feedback})
        return self.result("", limit, exhausted=True)

    def turn(self, n: int, call: dict[str, Any] | None, last: bool) -> str:
        """Run (or refuse) one tool call; the text the model reads next."""
        hop: dict[str, Any] = {
            "n": n,
            "tool": call["tool"] if call else None,
            "args": call["args"] if call else {},
            "ms": 0.0,
            "model_ms": self.last_model_ms,
            "ok": False,
        }
        self.hops.append(hop)
        if call is None:
            hop["out"] = "no tool call"
            return NUDGE_JSON
        name, args = call["tool"], call["args"]
        node = args.get("id") if isinstance(args.get("id"), str) else None
        if node:
            hop["id"] = node
        if last:
            hop["out"] = "refused: the deadline turn needs an answer"
            return DEADLINE
        if name not in TOOLS:
            hop["out"] = "refused: not a read tool"
            return (
                f"{name!r} is not available: this walk only reads. Tools: "
                + ", ".join(TOOLS)
                + ", answer. "
                + NUDGE_JSON
            )
        signature = json.dumps([name, args], sort_keys=True, ensure_ascii=False)
        if signature in self.seen:
            hop["out"] = "refused: repeated call"
            return (
                "You already made that exact call; its result is above. Choose "
                "another call, or answer."
            )
        self.seen.add(signature)
        out, ms = self.tool(name, args)
        ok = not is_error(out)
        hop.update(ms=ms, ok=ok, out=_describe(out))
        self.steps.append(
            {
                "step": name,
                "ms": ms,
                "tokens": _cost(out),
                "hop": n,
                **({"id": node} if node else {}),
            }
        )
        self.read.append({"n": n, "tool": name, **({"id": node} if node else {}), "result": out})
        if ok and name in OPENS:
            opened = _ids(args.get("id"))
            missing = set(_ids(out.get("missing", [])))
            self.opened += [i for i in opened if i not in missing and i not in self.opened]
        return f"Result of {name}:\n{_feed(out)}"

    def finish(self, args: dict[str, Any], n: int) -> dict[str, Any]:
        text = args.get("text")
        text = text.strip() if isinstance(text, str) else ""
        self.hops.append(
            {
                "n": n,
                "tool": "answer",
                "args": {},
                "ms": 0.0,
                "model_ms": self.last_model_ms,
                "ok": bool(text),
                "out": "answer" if text else "empty answer",
            }
        )
        if not text:
            return self.result("", n, exhausted=True)
        named = [i for i in _ids(args.get("answer_nodes")) if i in self.opened]
        return self.result(text, n, evidence=named or list(self.opened))

    def result(
        self, text: str, turns: int, exhausted: bool = False, evidence: list[str] | None = None
    ) -> dict[str, Any]:
        evidence = [] if exhausted else list(evidence or [])
        out: dict[str, Any] = {
            "answer": text,
            "model": self.binding.model,
            "model_ms": round(self.model_ms, 2),
            "turns": turns,
            "hops": self.hops,
            "read": self.read,
            "usage": self.usage,
            "evidence": evidence,
            "sources": self.sources(evidence),
            "reply_tokens": self.ask.max_tokens,
        }
        if exhausted:
            out["exhausted"] = True
        return out

    def sources(self, evidence: list[str]) -> list[dict[str, Any]]:
        if not evidence:
            return []
        looked, _ = self.tool("look", {"id": evidence[:10], "fields": LOOK_FIELDS})
        if is_error(looked):
            return []
        out = []
        for node in looked.get("nodes", []):
            out.append({key: node.get(key) for key in ("id", "title", "summary", "type")})
        return out


def _cost(out: Any) -> int:
    from monkeyllm.budget import cost

    return cost(out)


def run(
    station: Any, who: Any, forest: str, ask: Ask, binding: Binding, root: Any
) -> dict[str, Any]:
    """A walk's result (from the store when the forest has not moved), or an envelope."""
    started = time.perf_counter()
    _, vine = station.forests.get(forest)
    parts = {**cache_parts(ask, binding, who.policy), "head": vine.head()}
    entry = cache.key(parts)
    with cache.AnswerStore(root) as store:
        if ask.cache and parts["head"] is not None:
            hit = store.get(entry)
            if hit is not None:
                return {**hit, "cached": True, "trace": trace.build([], 0.0, started)}
        walk = Walk(station, who, forest, ask, binding, root)
        out = walk.run()
        if is_error(out):
            return out
        if parts["head"] is not None:
            store.put(entry, "", out)
    return {
        **out,
        "trace": trace.build(walk.steps, walk.forest_ms, started),
        "cost": trace.cost(binding, walk.usage),
    }
