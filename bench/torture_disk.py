"""A file system that refuses writes: every write answers an envelope (E_READONLY) and
leaves the forest as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.torture_crash import prepare_writes
from bench.torture_kit import BRANCH, REPO, digest_tree, git, status
from monkeyllm import Vine

# A writer under a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored): every write that
# grows a file past the limit fails with EFBIG, as one past the free space fails with
# ENOSPC. Each kind of write is made large enough to cross the limit.
DISK_FULL_CHILD = """
import json, resource, signal, sys
from monkeyllm import Vine
root, limit = sys.argv[1], int(sys.argv[2])
big = "x" * (2 * limit)
vine = Vine(root)
vine.look("sales/exchange-policy")          # the catalog is open before the limit
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
writes = [
    ("plant-note", lambda: vine.plant({"id": "torture/huge", "type": "note",
        "parent": "torture", "title": "Huge", "summary": "Too large to write.",
        "body": "# Huge\\n\\n" + big})),
    ("plant-dataset", lambda: vine.plant({"id": "torture/huge-data", "type": "dataset",
        "parent": "torture", "title": "Huge data", "summary": "Too many rows to write.",
        "schema": {"t": {"columns": {"id": "INTEGER", "v": "TEXT"}, "primary_key": ["id"]}},
        "rows": {"t": [[n, "y" * 1000] for n in range(2 * limit // 1000)]}})),
    ("graft-append", lambda: vine.graft("sales/exchange-policy",
        {"append_section": {"header": "Huge", "body": big}})),
    ("graft-body", lambda: vine.graft("torture/hub", {"replace_body": "# Hub\\n\\n" + big})),
    ("graft-frontmatter", lambda: vine.graft("torture/hub",
        {"set_frontmatter": {"summary": "The hub, grown past the limit."}, "append_section":
         {"header": "Bulk", "body": big}})),
    ("tend", lambda: vine.tend("torture/data",
        f"UPDATE t SET v = zeroblob({2 * limit}) WHERE id = 1")),
    # Both rewrite torture/bulky (past the limit), which links to the hub.
    ("prune-forced", lambda: vine.prune("torture/hub", force=True)),
    ("transplant", lambda: vine.transplant("torture/hub", "torture/hub-moved")),
]
out = {}
for kind, thunk in writes:
    try:
        out[kind] = thunk()
    except BaseException as exc:
        out[kind] = f"raised {exc!r}"
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
out["after"] = vine.look("sales/exchange-policy", fields=["summary"])
vine.close()
print(json.dumps(out))
"""


@dataclass
class DiskFullFigures:
    """What the refused-write probe found."""

    attempted: int = 0
    readonly: int = 0  # answered E_READONLY
    other: int = 0  # answered another envelope (a misleading code)
    internal: int = 0  # answered E_INTERNAL, or no envelope at all
    changed: int = 0  # files, HEAD or the working tree not as before
    codes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def _forest_bytes(root: Path) -> dict[str, str]:
    return {k: v for k, v in digest_tree(root).items() if k != ".vine.lock"}


def disk_full(forest: Path, limit: int = 200_000) -> DiskFullFigures:
    """Every kind of write under a file-size limit that refuses it: each must answer an
    envelope and leave the forest (its files, HEAD, a clean tree) exactly as it was."""
    figures = DiskFullFigures()
    prepare_writes(forest)
    with Vine(forest) as vine:
        vine.look("_index")
        if "error" in vine.look(f"{BRANCH}/bulky"):
            out = vine.plant(
                {
                    "id": f"{BRANCH}/bulky",
                    "type": "note",
                    "parent": BRANCH,
                    "title": "Bulky",
                    "summary": "A note larger than the limit.",
                    "links": [{"rel": "related-to", "target": f"{BRANCH}/hub"}],
                    "body": "# Bulky\n\n" + "z" * (2 * limit),
                }
            )
            if "error" in out:
                raise RuntimeError(f"cannot prepare the disk-full probe: {out}")
    before, head = _forest_bytes(forest), git(forest, "rev-parse", "HEAD").strip()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", DISK_FULL_CHILD, str(forest), str(limit)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    try:
        out = json.loads(done.stdout)
    except ValueError:
        figures.failures.append(f"disk-full writer exit {done.returncode}: {done.stderr[-300:]}")
        return figures
    after = out.pop("after")
    for kind, answer in out.items():
        figures.attempted += 1
        code = answer.get("error", {}).get("code") if isinstance(answer, dict) else None
        figures.codes[code or "no envelope"] = figures.codes.get(code or "no envelope", 0) + 1
        if code == "E_READONLY":
            figures.readonly += 1
        elif code and code != "E_INTERNAL":
            figures.other += 1
        else:
            figures.internal += 1
            figures.failures.append(f"disk full, {kind}: {str(answer)[:200]}")
    if "error" in after:
        figures.failures.append(f"disk full: a read after the refusals failed: {after}")
    now = _forest_bytes(forest)
    moved = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    dirty = status(forest)
    if moved or dirty or git(forest, "rev-parse", "HEAD").strip() != head:
        figures.changed = len(moved) or 1
        figures.failures.append(f"disk full: the forest changed: {moved[:5]} {dirty[:200]!r}")
    return figures
