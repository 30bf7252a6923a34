"""``vine station key`` and ``bind`` as a newcomer types them: a forest name no forest
under ROOT has is said on stderr (the key is still made), and an empty key list says
how to make one instead of printing nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..forestkit import copy_sample
from .kit import vine


def test_a_key_for_a_forest_not_under_the_root_is_made_and_said(tmp_path: Path) -> None:
    copy_sample(tmp_path / "acme")
    ok = vine("station", "key", "add", "ana", "--root", str(tmp_path), "--forest", "acme")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["forest"] == "acme"
    assert "no forest" not in ok.stderr
    typo = vine("station", "key", "add", "ana", "--root", str(tmp_path), "--forest", "acmee")
    assert typo.exit_code == 0 and json.loads(typo.stdout)["key"].startswith("mk_")
    assert "no forest 'acmee' under" in typo.stderr and "forests there: acme" in typo.stderr
    bound = vine(
        "station", "bind-embedder", "acmee", "--root", str(tmp_path),
        "--model", "multilingual-e5-small",
    )  # fmt: skip
    assert bound.exit_code == 0, bound.stderr
    assert "no forest 'acmee' under" in bound.stderr


def test_an_empty_key_list_says_how_to_add_one(tmp_path: Path) -> None:
    result = vine("station", "key", "list", "--root", str(tmp_path))
    assert result.exit_code == 0 and result.stdout == ""
    assert "no keys yet" in result.stderr and "vine station key add" in result.stderr


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    """Before, `--port 99999` printed the server's address and then hung, serving
    nothing (a real process with a timeout, so that a regression fails, not hangs)."""
    copy_sample(tmp_path / "acme")
    for argv in (
        ["serve", "--forest", str(tmp_path / "acme"), "--transport", "http"],
        ["station", "serve", "--root", str(tmp_path)],
    ):
        result = subprocess.run(
            [sys.executable, "-m", "monkeyllm.commands", *argv, "--port", "99999"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 2, (argv, result.stderr)
        assert "99999 is not in the range 1<=x<=65535" in result.stderr


def test_the_key_list_is_a_table_for_a_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal: where each key may read in words (not `[""]`), dates (not epoch
    seconds), revoked keys marked; piped, the JSON lines as before."""
    copy_sample(tmp_path / "acme")
    root = str(tmp_path)
    made = vine("station", "key", "add", "ana", "--root", root, "--forest", "acme")
    vine(
        "station", "key", "add", "bob", "--root", root, "--forest", "acme",
        "--allow", "sales", "--deny", "sales/pipeline",
    )  # fmt: skip
    vine("station", "key", "revoke", json.loads(made.stdout)["id"], "--root", root)
    piped = vine("station", "key", "list", "--root", root)
    assert [json.loads(line)["principal"] for line in piped.stdout.splitlines()] == ["ana", "bob"]
    monkeypatch.setattr("monkeyllm.commands.common.json_mode", lambda flag: False)
    shown = vine("station", "key", "list", "--root", root, env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.stderr
    text = shown.stdout
    assert "the whole forest" in text and "sales/ (not sales/pipeline/)" in text
    assert "(revoked)" in text and "never" in text
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", text)
    assert '[""]' not in text and "created_at" not in text
