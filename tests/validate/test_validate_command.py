"""``vine validate`` as a command: its output formats, exit codes and ``--strict``, and the
pre-commit hook."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monkeyllm.commands.validate import escape_data, escape_property
from monkeyllm.validate import Finding
from monkeyllm.validate import validate as check

from ..forestkit import copy_sample, files_of, fuzzed, git, head, status
from .kit import ICMS, E, N, W, broken_git_copy, edit, run, seen, write


def test_cli_clean_exits_0(clean_copy: Path) -> None:
    code, out = run("-f", str(clean_copy))
    assert code == 0
    assert out == "0 errors, 0 warnings\n"


def test_cli_errors_exit_1_grouped_by_file(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    edit(root, ICMS, "type: concept", "type: gadget")
    edit(root, ICMS, "# ICMS\n", "# ICMS\n\nSee [[finance/nope]].\n")
    code, out = run("-f", str(root))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "finance/icms.md (finance/icms)"
    assert lines[1].split()[:3] == ["3:", "error", "schema.unknown-type"]
    assert lines[2].strip().startswith("fix: ")
    assert lines[3].split()[:3] == ["20:", "warning", "body.broken-wikilink"]
    assert lines[-1] == "1 error, 1 warning"


def test_cli_warnings_fail_only_with_strict(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    edit(root, "sales/_index.md", "coverage: 5 bananas", "coverage: 7 bananas")
    assert run("-f", str(root))[0] == 0
    assert run("-f", str(root), "--strict")[0] == 1


UPSTREAM_INDEX = """---
id: _index
type: branch
title: Acme brain
summary: The Acme forest, new, with no sub-branches yet.
coverage: 1 bananas, 0 sub-branches
created: '2026-01-05'
updated: '2026-01-05'
---

# Acme brain

> The Acme forest, new, with no sub-branches yet.

## Sub-branches

## Direct bananas

- [[ledger]] — Every closed order, one row each.

## Cross trails

## Landmarks
"""
UPSTREAM_DATASET = """---
id: ledger
type: dataset
title: Ledger
summary: Every closed order, one row each.
created: '2026-01-05'
updated: '2026-01-05'
source: agent
payload: ledger.db
payload_type: sqlite
---

# Ledger

## Query manual

Tables:
- `orders(id INTEGER)`

Example queries:
- `SELECT * FROM orders LIMIT 5`
- `SELECT COUNT(*) FROM orders`
"""


def test_strict_passes_a_clean_upstream_forest_whose_dataset_has_no_hash(tmp_path: Path) -> None:
    """A forest as the existing engine writes it: a dataset without payload_hash is a
    note that --fix would record, never a warning that fails --strict."""

    from monkeyllm.writes.init import init_forest

    root = tmp_path / "upstream"
    init_forest(root, "Acme brain", None)
    write(root, "_index.md", UPSTREAM_INDEX)
    write(root, "ledger.md", UPSTREAM_DATASET)
    conn = sqlite3.connect(root / "ledger.db")
    conn.execute("CREATE TABLE orders(id INTEGER)")
    conn.commit()
    conn.close()
    assert seen(check(root)) == {("payload.hash-missing", N, "ledger", "ledger.md", 9)}
    code, out = run("-f", str(root), "--strict")
    assert code == 0, out
    assert out.splitlines()[-1] == "0 errors, 0 warnings, 1 note for --fix"
    assert "note" in out.splitlines()[1]
    code, out = run("-f", str(root), "--strict", "--format", "github")
    assert code == 0 and out.startswith(
        "::notice file=ledger.md,line=9,title=payload.hash-missing::"
    )
    code, out = run("-f", str(root), "--strict", "--format", "json")
    assert code == 0 and json.loads(out)["notes"] == 1
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
    code, out = run("-f", str(root), "--fix", "--strict")
    assert code == 0 and out == "0 errors, 0 warnings\n"


def test_cli_usage_errors_exit_2(tmp_path: Path, clean_copy: Path) -> None:
    assert run("-f", str(tmp_path))[0] == 2
    assert run("-f", str(clean_copy), "--format", "xml")[0] == 2


def test_cli_json(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    edit(root, ICMS, "type: concept", "type: gadget")
    code, out = run("-f", str(root), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["errors"] == 1 and data["warnings"] == 0
    assert data["findings"] == [
        {
            "severity": "error",
            "code": "schema.unknown-type",
            "id": "finance/icms",
            "path": ICMS,
            "line": 3,
            "message": "type 'gadget' is not declared",
            "fix": data["findings"][0]["fix"],
            "fixable": False,
        }
    ]
    assert "fixed" not in data


def test_cli_github_annotations(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    edit(root, ICMS, "type: concept", "type: gadget")
    write(root, "sales/old.db", b"x")
    code, out = run("-f", str(root), "--format", "github", "--strict")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        "::error file=finance/icms.md,line=3,title=schema.unknown-type::"
        "finance/icms: type 'gadget' is not declared (fix: "
    )
    assert lines[1].startswith("::warning file=sales/old.db,title=payload.orphan::")
    assert lines[2] == "1 error, 1 warning"


def test_github_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_cli_fix(tmp_path: Path) -> None:
    root = broken_git_copy(tmp_path)
    before = head(root)
    code, out = run("-f", str(root), "--fix", "--format", "json")
    data = json.loads(out)
    assert code == 0  # one warning is left: a broken wikilink
    assert [f["code"] for f in data["findings"]] == ["body.broken-wikilink"]
    assert {r["code"] for r in data["fixed"]} >= {"index.missing-entry", "payload.hash-drift"}
    assert data["commit"] == head(root) != before
    code, out = run("-f", str(root), "--fix")
    assert code == 0 and head(root) == data["commit"]
    assert out.splitlines()[-1] == "0 errors, 1 warning"


def test_validate_never_writes(tmp_path: Path) -> None:
    root = broken_git_copy(tmp_path)
    before, files, state = head(root), files_of(root), status(root)
    check(root)
    for fmt in ("text", "json", "github"):
        run("-f", str(root), "--format", fmt, "--strict")
    assert (head(root), files_of(root), status(root)) == (before, files, state)
    assert not (root / "_derived").exists()


@fuzzed(25)
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=300).map(lambda t: "---\n" + t),
        st.text(max_size=200).map(lambda t: f"---\n{t}\n---\n\n{t}\n"),
    )
)
def test_garbage_never_raises(tmp_path_factory: pytest.TempPathFactory, data: str | bytes) -> None:
    root = tmp_path_factory.getbasetemp() / "garbage"
    if not root.exists():
        copy_sample(root)
    write(root, "sales/garbage.md", data)
    findings = check(root)
    assert all(isinstance(f, Finding) and f.severity in (E, W, N) for f in findings)
    assert {f.path for f in findings} <= {"sales/garbage.md", "sales/_index.md"}


def test_the_pre_commit_hook_runs_vine_validate_on_the_forest(tmp_path: Path) -> None:
    """``.pre-commit-hooks.yaml`` names one hook that pre-commit can install from this
    repository (a Python package) and run once per commit from the forest's root, as
    pre-commit does: exit 0 on a clean forest; a wikilink that leads nowhere is a
    warning, which fails the commit once args add ``--strict``."""
    import shlex
    import subprocess
    import sys

    import yaml

    from ..forestkit import REPO

    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "vine-validate" and hook["language"] == "python"
    assert hook["pass_filenames"] is False and re.search(hook["files"], "sales/x.md")
    assert not re.search(hook["files"], "sales/orders-2026.db")
    entry = shlex.split(hook["entry"])
    assert entry[:2] == ["vine", "validate"]
    vine = Path(sys.executable).with_name("vine")
    command = [str(vine), *entry[1:]]
    forest = copy_sample(tmp_path / "brain", git=True)
    clean = subprocess.run(
        [*command, "--no-payloads"], cwd=forest, capture_output=True, text=True, timeout=120
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
    note = forest / "sales" / "exchange-policy.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace(
            "# Exchange policy", "# Exchange policy\n\nSee [[sales/nowhere-at-all]].", 1
        ),
        encoding="utf-8",
    )
    lenient = subprocess.run(command, cwd=forest, capture_output=True, text=True, timeout=120)
    assert lenient.returncode == 0 and "broken-wikilink" in lenient.stdout
    broken = subprocess.run(
        [*command, "--strict"], cwd=forest, capture_output=True, text=True, timeout=120
    )
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "sales/exchange-policy.md" in broken.stdout
