"""What every torture family shares: the sample forest and scratch copies of it, git in a
forest, a digest of a folder, and a Station serving a scratch folder."""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-brain"


def digest_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` except the engine's own derived state."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or "_derived" in rel.parts or ".git" in rel.parts:
            continue
        out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


BRANCH = "torture"


def git(root: Path, *args: str) -> str:
    """Run git in ``root``; its standard output."""
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def http(client: Any, url: str, key: str, call: str, args: dict[str, Any]) -> Any:
    """One Station call: its JSON body, or a string saying what went wrong (a 5xx, a
    status that disagrees with the body, a transport failure, a body that is not JSON)."""
    try:
        got = client.post(
            f"{url}/v1/forests/{STATION_FOREST}/{call}",
            json=args,
            headers={"Authorization": f"Bearer {key}"},
        )
        body = got.json()
    except Exception as exc:  # noqa: BLE001 - every failure is judged, never raised
        return f"{call}: {exc!r}"
    from monkeyllm.serve.station.status import status_of

    if not isinstance(body, dict) or got.status_code != status_of(body):
        return f"{call}: HTTP {got.status_code} with {str(body)[:150]}"
    return body


STATION_FOREST = "forest"  # scratch() names the copy forest/, the Station's id of it


@contextlib.contextmanager
def serve_station(root: Path) -> Iterator[tuple[str, str]]:
    """``vine station serve`` over the folder ``root`` in a process of its own, with a
    fresh admin key: (base URL, key). The Station takes a forest's writer lock for each
    write alone, as every long-lived server does."""
    import httpx

    from monkeyllm.serve.station import keys
    from monkeyllm.serve.station.store import Store

    from .station_load import station

    with Store(root) as store:
        key = keys.add(
            store, "torture", STATION_FOREST, [], [], keys.parse_caps("read,query,write,tend,admin")
        )[1]
    log = root / ".station" / f"serve-{time.time_ns()}.log"
    with station(root, log) as (url, _pid), httpx.Client(timeout=120) as client:
        first = http(client, url, key, "look", {"id": "_index"})  # opens the forest
        if not isinstance(first, dict) or "error" in first:
            raise RuntimeError(f"the Station's first call failed: {first}")
        yield url, key


def scratch(base: Path) -> Path:
    """A git-backed copy of sample-brain (payloads included) under ``base``."""
    forest = base / "forest"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            str(REPO / "tests" / "sample_data" / "sample-brain.bundle"),
            str(forest),
        ],
        check=True,
        capture_output=True,
    )
    for payload in SAMPLE.rglob("*.db"):
        if "_derived" not in payload.parts:
            shutil.copy2(payload, forest / payload.relative_to(SAMPLE))
    return forest


def read_until(rfd: int, needle: bytes, timeout: float) -> bytes:
    """What a child writes to the pipe ``rfd`` until it says ``needle`` or ``ERR``, closes
    the pipe, or ``timeout`` seconds pass."""
    data = b""
    deadline = time.monotonic() + timeout
    while needle not in data and b"ERR" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if ready:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            data += chunk
    return data
