"""`vine serve` on a forest that is not its own git repository (a copied folder, or
`sample-brain/` inside this repository, which is what a newcomer serves first): every
write would fail, since each is a commit in the forest's own repository, so the server
says so up front and serves it read-only: no write tools listed, `forests` says
`writable: false`, the instructions say read-only, and a write named anyway answers
`E_READONLY` with the reason and how to get a writable copy (before, every write
answered `E_SCHEMA` telling the agent to run `git init` in it). With `--root`, only
such forests are read-only; the others are written as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .forestkit import copy_sample, git
from .mcpkit import ERAS, TIMEOUT, payload, stdio_session

NOTE = {
    "id": "sales/newcomer-note",
    "type": "note",
    "parent": "sales/_index",
    "title": "Newcomer note",
    "summary": "Planted by an agent on a server of a folder.",
}


def run(fn: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT * 2):
            return await fn()

    return anyio.run(bounded)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("where", ["plain-folder", "inside-a-repository"])
def test_a_forest_that_is_not_its_own_repository_is_served_read_only(
    tmp_path: Path, era: str, where: str
) -> None:
    if where == "inside-a-repository":
        outer = tmp_path / "project"
        outer.mkdir()
        git(outer, "init", "-q")
        forest = copy_sample(outer / "brain")
        reason = f"inside the git repository at {outer}"
    else:
        forest = copy_sample(tmp_path / "brain")
        reason = "not a git repository"
    errlog = tmp_path / "stderr.txt"

    async def body() -> dict[str, Any]:
        async with stdio_session("-f", str(forest), errlog=errlog, era=era) as session:
            return {
                "names": [t.name for t in (await session.list_tools()).tools],
                "instructions": session.info.instructions,  # type: ignore[attr-defined]
                "forests": payload(await session.call_tool("forests", {})),
                "plant": payload(await session.call_tool("plant", {"node": NOTE})),
                "look": payload(await session.call_tool("look", {"id": "sales/exchange-policy"})),
            }

    out = run(body)
    assert not {"plant", "graft", "tend", "prune", "transplant", "ingest"} & set(out["names"])
    assert {"locate", "look", "query", "view"} <= set(out["names"])
    if out["instructions"] is not None:  # the handshake era carries them
        assert "read-only" in out["instructions"]
    assert out["forests"]["forests"][0]["writable"] is False
    error = out["plant"]["error"]
    assert error["code"] == "E_READONLY", error
    assert reason in error["message"] and "--copy" in error["hint"]
    assert "git init" not in error.get("hint", "")
    assert out["look"]["id"] == "sales/exchange-policy"
    assert not (forest / "sales" / "newcomer-note.md").exists()
    said = errlog.read_text(encoding="utf-8")
    assert "served read-only" in said and reason in said


def test_with_root_only_the_forests_that_are_not_repositories_are_read_only(tmp_path: Path) -> None:
    root = tmp_path / "forests"
    root.mkdir()
    copy_sample(root / "own", git=True)
    copy_sample(root / "copied")

    async def body() -> dict[str, Any]:
        async with stdio_session("--root", str(root)) as session:
            names = [t.name for t in (await session.list_tools()).tools]
            listed = payload(await session.call_tool("forests", {}))
            tries = {
                forest: payload(await session.call_tool("plant", {"forest": forest, "node": NOTE}))
                for forest in ("own", "copied")
            }
            return {"names": names, "forests": listed, "tries": tries}

    out = run(body)
    assert "plant" in out["names"]
    writable = {f["id"]: f["writable"] for f in out["forests"]["forests"]}
    assert writable == {"copied": False, "own": True}
    assert out["tries"]["own"]["id"] == "sales/newcomer-note"
    assert out["tries"]["copied"]["error"]["code"] == "E_READONLY"
    assert (root / "own" / "sales" / "newcomer-note.md").exists()
    assert not (root / "copied" / "sales" / "newcomer-note.md").exists()
