"""Helpers the CLI tests share: running ``vine`` in process and comparing with the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from monkeyllm import Vine
from monkeyllm.commands.app import app
from monkeyllm.commands.spelling import CLI
from monkeyllm.hints import spelled

runner = CliRunner()


DATASET = "sales/orders-2026"


def cool(root: Path) -> None:
    """Forget the heat earlier reads deposited, so the CLI and the engine rank from the
    same (empty) trails."""
    for suffix in ("", "-wal", "-shm"):
        (root / "_derived" / f"trails.db{suffix}").unlink(missing_ok=True)


def engine(root: Path, name: str, **args: Any) -> dict[str, Any]:
    """The engine's answer to one call, opened the way reads are: read-only, with its
    hints in the command line's words (as the CLI has them worded)."""
    cool(root)
    with spelled(CLI), Vine(root, writable=False) as vine:
        return getattr(vine, name)(**args)


def vine(*args: str, input: str | None = None, env: dict[str, str | None] | None = None) -> Result:
    """Run ``vine ARGS`` in process (stdout is not a terminal, so it prints JSON).

    ``$VINE_FOREST`` is unset unless ``env`` sets it, so a developer's shell cannot
    change which forest a test reads.
    """
    return runner.invoke(
        app,
        list(args),
        input=input,
        env={"VINE_FOREST": None, **(env or {})},
        catch_exceptions=False,
    )


def run_json(root: Path, *args: str, input: str | None = None) -> Any:
    """``vine ARGS -f ROOT``: it succeeds, says nothing on stderr, prints one JSON value."""
    cool(root)
    result = vine(*args, "-f", str(root), input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.stderr == ""
    return json.loads(result.stdout)


def steady(out: dict[str, Any]) -> dict[str, Any]:
    """A response without its timing and commit, which differ between two runs."""
    return {k: v for k, v in out.items() if k not in ("elapsed_ms", "commit")}


def json_arg(value: Any, source: str, folder: Path) -> tuple[str, str | None]:
    """A JSON argument as the command line takes it: inline, ``@file`` or ``-`` with
    the text on standard input. Returns (argument, stdin)."""
    text = json.dumps(value)
    if source == "inline":
        return text, None
    if source == "file":
        path = folder / "arg.json"
        path.write_text(text, encoding="utf-8")
        return f"@{path}", None
    return "-", text


def error_line(envelope: dict[str, Any]) -> str:
    """The one stderr line the CLI prints for an error envelope."""
    err = envelope["error"]
    line = f"vine: {err['code']}: {err['message']}"
    return line + (f" (hint: {err['hint']})" if err.get("hint") else "") + "\n"
