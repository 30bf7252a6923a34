"""Crashes inside writes: an exception injected at every step of every kind of write,
and SIGKILLs of a writer at random moments; no write is ever half-made or lost."""

from __future__ import annotations

import os
import random
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.torture_kit import BRANCH, git, read_until, status
from monkeyllm import Vine
from monkeyllm.validate import validate

SHA_LINE = re.compile(r"^[0-9a-f]{40}$")
DATA_SCHEMA = {"t": {"columns": {"id": "INTEGER", "v": "INTEGER"}, "primary_key": ["id"]}}


def prepare_writes(forest: Path) -> None:
    """The branch every write of the crash and concurrency families lands in: a hub
    note that gathers links and a dataset that counts."""
    with Vine(forest) as vine:
        if "error" not in vine.look(f"{BRANCH}/_index"):
            return
        for node in (
            {
                "id": BRANCH,
                "type": "branch",
                "parent": "_index",
                "title": "Torture",
                "summary": "Nodes written by writers that crash, get killed or race.",
            },
            {
                "id": f"{BRANCH}/hub",
                "type": "note",
                "parent": BRANCH,
                "title": "Hub",
                "summary": "The note every writer links from.",
            },
            {
                "id": f"{BRANCH}/data",
                "type": "dataset",
                "parent": BRANCH,
                "title": "Data",
                "summary": "A counter every writer bumps.",
                "schema": DATA_SCHEMA,
                "rows": {"t": [[1, 0]]},
            },
        ):
            out = vine.plant(node)
            if "error" in out:
                raise RuntimeError(f"cannot prepare the forest: {out}")


def mixed_writes(vine: Vine, tag: str) -> Iterator[tuple[str, Any]]:
    """An endless mix of every kind of write, as ``(kind, thunk)`` pairs: plant of a
    note, a branch and a dataset, each graft operation, tend. Ids carry ``tag``."""
    hub = f"{BRANCH}/hub"
    stale = [{"rel": e["rel"], "target": e["target"]} for e in vine.look(hub).get("edges_out", [])]
    j = 0
    while True:
        nid = f"{BRANCH}/n{tag}-{j}"
        yield (
            "plant-note",
            lambda nid=nid: vine.plant(
                {
                    "id": nid,
                    "type": "note",
                    "parent": BRANCH,
                    "title": nid,
                    "summary": f"Node {nid} as planted.",
                    "body": f"# {nid}\n\n## Log\n\nPlanted.",
                }
            ),
        )
        yield (
            "graft-frontmatter+section",
            lambda nid=nid: vine.graft(
                nid,
                {
                    "set_frontmatter": {"summary": f"Node {nid} revised."},
                    "append_section": {"header": "More", "body": "Appended."},
                },
            ),
        )
        # The hub keeps about one link, so it never reaches the 50-link cap.
        yield (
            "graft-links",
            lambda nid=nid, stale=stale: vine.graft(
                hub,
                {
                    "add_links": [{"rel": "related-to", "target": nid}],
                    "remove_links": stale,
                    "set_frontmatter": {"summary": f"Hub at {nid}."},
                },
            ),
        )
        stale = [{"rel": "related-to", "target": nid}]
        yield (
            "graft-body",
            lambda nid=nid: vine.graft(
                nid, {"replace_section": {"header": "Log", "body": "Rewritten."}}
            ),
        )
        yield "tend", lambda: vine.tend(f"{BRANCH}/data", "UPDATE t SET v = v + 1 WHERE id = 1")
        # The hub links to the note: the move rewrites that link, the forced prune
        # drops it (every other round, so the branch keeps some of them).
        yield "transplant-note", lambda nid=nid: vine.transplant(nid, nid + "-moved")
        stale = [{"rel": "related-to", "target": nid + "-moved"}]
        if j % 2 == 0:
            yield "prune-note", lambda nid=nid: vine.prune(nid + "-moved", force=True)
        if j % 3 == 0:
            yield (
                "plant-branch",
                lambda j=j: vine.plant(
                    {
                        "id": f"{BRANCH}/b{tag}-{j}",
                        "type": "branch",
                        "parent": BRANCH,
                        "title": "Sub",
                        "summary": "A sub-branch planted under fire.",
                    }
                ),
            )
        if j % 4 == 1:
            dataset = f"{BRANCH}/d{tag}-{j}"
            yield (
                "plant-dataset",
                lambda dataset=dataset, j=j: vine.plant(
                    {
                        "id": dataset,
                        "type": "dataset",
                        "parent": BRANCH,
                        "title": "D",
                        "summary": "A dataset planted under fire.",
                        "schema": DATA_SCHEMA,
                        "rows": {"t": [[1, j], [2, j]]},
                    }
                ),
            )
            # Its payload is renamed beside the moved node, then goes to the graveyard.
            yield (
                "transplant-dataset",
                lambda dataset=dataset: vine.transplant(dataset, dataset + "-moved"),
            )
            yield "prune-dataset", lambda dataset=dataset: vine.prune(dataset + "-moved")
        j += 1


def forest_faults(vine: Vine, root: Path) -> list[str]:
    """What is wrong with a forest after a crash, as messages ("" list when sound): a
    dirty tree, a validate error, a catalog that disagrees with the files."""
    out = []
    dirty = status(root)
    if dirty:
        out.append(f"working tree not clean: {dirty[:200]!r}")
    errors = [f for f in validate(root) if f.severity == "error"]
    out += [f"validate: {f.code} {f.path}: {f.message}" for f in errors[:5]]
    out += catalog_mismatches(vine, root)
    return out


def catalog_mismatches(vine: Vine, root: Path) -> list[str]:
    """Differences between the catalog and the node files: every id on each side, and
    each node's summary as the catalog and its frontmatter give it."""
    from monkeyllm.nodes import parse_text

    on_disk: dict[str, str] = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", "_derived"):
            continue
        try:
            node = parse_text(rel.as_posix()[:-3], path.read_text(encoding="utf-8"))
        except Exception as exc:  # noqa: BLE001 - an unreadable node is a finding
            return [f"unreadable node file {rel}: {exc}"]
        on_disk[rel.as_posix()[:-3]] = str(node.meta.get("summary", ""))
    listed: dict[str, str] = {}
    after = ""
    while True:
        page = vine.scan("_index", fields=["id", "summary"], recursive=True, limit=50, after=after)
        if "error" in page:
            return [f"scan failed: {page['error']}"]
        listed.update({n["id"]: n.get("summary", "") for n in page["nodes"]})
        if not page.get("next"):
            break
        after = page["next"]
    listed.setdefault("_index", on_disk.get("_index", ""))
    out = [f"on disk, not in the catalog: {i}" for i in sorted(set(on_disk) - set(listed))]
    out += [f"in the catalog, not on disk: {i}" for i in sorted(set(listed) - set(on_disk))]
    out += [
        f"catalog summary of {i} differs from its file"
        for i in sorted(on_disk)
        if i in listed
        and i != "_index"
        and not ids_is_branch_fallback(i)
        and listed[i] != on_disk[i]
    ]
    return out


def ids_is_branch_fallback(node_id: str) -> bool:
    """Branches may take their summary from the body; their catalog summary is not
    compared with the frontmatter."""
    return node_id.endswith("_index")


@dataclass
class CrashFigures:
    """What the crash families found."""

    attempted: int = 0  # writes started
    committed: int = 0  # writes that answered a commit
    faults: int = 0  # exceptions injected at a named write step
    kills: int = 0  # SIGKILLs of a writer process
    kills_mid_write: int = 0  # kills that left a journal behind
    lost: int = 0  # answered commits missing from history
    kinds: list[str] = field(default_factory=list)  # kinds of write faults were put in
    failures: list[str] = field(default_factory=list)


WRITE_KINDS = (
    "plant-note",
    "graft-frontmatter+section",
    "graft-links",
    "graft-body",
    "tend",
    "transplant-note",
    "prune-note",
    "plant-branch",
    "plant-dataset",
    "transplant-dataset",
    "prune-dataset",
)


# The writes each kind needs first (from the same tag, so the ids line up).
PREREQUISITES = {
    "graft-frontmatter+section": ("plant-note",),
    "graft-links": ("plant-note",),
    "graft-body": ("plant-note",),
    "tend": ("plant-note",),
    "transplant-note": ("plant-note",),
    "prune-note": ("plant-note", "transplant-note"),
    "transplant-dataset": ("plant-dataset",),
    "prune-dataset": ("plant-dataset", "transplant-dataset"),
}


class Injected(RuntimeError):
    """An unexpected failure in the middle of a write."""


def fault_matrix(forest: Path, figures: CrashFigures | None = None) -> CrashFigures:
    """An exception at every named step of every kind of write, on ``forest``."""
    from monkeyllm.writes import transaction

    figures = figures or CrashFigures()
    prepare_writes(forest)
    with Vine(forest) as vine:
        kinds: dict[str, list[str]] = {}
        reached: list[str] = []
        transaction.FAULT = reached.append
        try:
            for kind, thunk in mixed_writes(vine, "steps"):
                if kind in kinds:
                    if len(kinds) == len(WRITE_KINDS):
                        break
                    continue
                reached.clear()
                figures.attempted += 1
                out = thunk()
                figures.committed += bool(out.get("commit"))
                kinds[kind] = list(dict.fromkeys(reached))
        finally:
            transaction.FAULT = None
        figures.kinds = sorted(kinds)
        for kind, steps in kinds.items():
            for step in steps:
                figures.faults += 1
                _fault_once(vine, forest, kind, step, figures)
    return figures


def _fault_once(vine: Vine, forest: Path, kind: str, step: str, figures: CrashFigures) -> None:
    from monkeyllm.writes import transaction

    def hook(name: str) -> None:
        if name == step:
            raise Injected(f"injected at {name}")

    tag = f"f{figures.faults}"
    thunk = next(t for k, t in mixed_writes(vine, tag) if k == kind)
    # A graft needs its note, a move or a prune the node it acts on: those writes
    # first, without a fault.
    for needed in PREREQUISITES.get(kind, ()):
        next(t for k, t in mixed_writes(vine, tag) if k == needed)()
    before = git(forest, "rev-parse", "HEAD").strip()
    transaction.FAULT = hook
    try:
        figures.attempted += 1
        out = thunk()
    finally:
        transaction.FAULT = None
    where = f"{kind} at {step}"
    now = git(forest, "rev-parse", "HEAD").strip()
    if out.get("commit"):
        figures.committed += 1
        if out["commit"] not in git(forest, "rev-list", "HEAD").split():
            figures.lost += 1
            figures.failures.append(f"{where}: the answered commit is not in history")
    elif now != before and step != "after-commit":
        figures.failures.append(f"{where}: answered {out} but HEAD moved")
    code = out.get("error", {}).get("code")
    if code not in (None, "E_INTERNAL"):
        figures.failures.append(f"{where}: answered {code}, not the injected failure")
    figures.failures += [f"{where}: {m}" for m in forest_faults(vine, forest)]


# The writer a kill round forks: it reports each write before it starts ("try KIND")
# and each commit once answered, through a pipe the parent drains after the kill.
def _kill_child(forest: Path, wfd: int, tag: str) -> None:
    def say(text: str) -> None:
        os.write(wfd, (text + "\n").encode())

    try:
        vine = Vine(forest)
        say("ready")
        for kind, thunk in mixed_writes(vine, tag):
            say(f"try {kind}")
            out = thunk()
            if "error" in out:
                say(f"ERR {kind} {out['error'].get('code')} {out['error'].get('message')}")
            elif out.get("commit"):
                say(out["commit"])
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        say(f"ERR exception {exc!r}")
    finally:
        os._exit(0)


def kill_loop(
    forest: Path,
    kills: int = 200,
    seed: int = 20260,
    figures: CrashFigures | None = None,
    *,
    max_wait: float = 0.4,
) -> CrashFigures:
    """``kills`` rounds: fork a writer looping over mixed writes, SIGKILL it at a random
    moment, reopen the forest (recovery runs) and check it. Needs ``os.fork``."""
    figures = figures or CrashFigures()
    prepare_writes(forest)
    rnd = random.Random(seed)
    reported: list[str] = []
    for round_no in range(kills):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(rfd)
            _kill_child(forest, wfd, f"k{round_no}")
        os.close(wfd)
        try:
            data = read_until(rfd, b"ready\n", timeout=30)
            time.sleep(rnd.uniform(0.0, max_wait))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            while chunk := os.read(rfd, 65536):
                data += chunk
        finally:
            os.close(rfd)
        figures.kills += 1
        figures.kills_mid_write += (forest / "_derived" / "journal.json").exists()
        lines = data.decode(errors="replace").split("\n")[:-1]  # complete lines only
        if not lines or lines[0] != "ready":
            figures.failures.append(f"round {round_no}: the writer never got ready: {lines}")
        figures.failures += [f"round {round_no}: {x}" for x in lines if x.startswith("ERR")]
        figures.attempted += sum(x.startswith("try ") for x in lines)
        shas = [x for x in lines if SHA_LINE.match(x)]
        figures.committed += len(shas)
        reported += shas
        try:
            with Vine(forest) as vine:  # recovery runs here
                history = set(git(forest, "rev-list", "HEAD").split())
                lost = [s for s in shas if s not in history]
                figures.lost += len(lost)
                figures.failures += [f"round {round_no}: commit {s} lost" for s in lost]
                figures.failures += [f"round {round_no}: {m}" for m in forest_faults(vine, forest)]
        except Exception as exc:  # noqa: BLE001 - a forest that will not open is a finding
            figures.failures.append(f"round {round_no}: reopening failed: {exc!r}")
    history = set(git(forest, "rev-list", "HEAD").split())
    late = [s for s in reported if s not in history]
    if late:
        figures.failures.append(f"{len(late)} reported commits gone by the end")
    return figures
