"""Every Python example in the README runs as printed, each block on its own (as a
reader pastes one into a fresh script or notebook cell), in a folder holding a copy of
sample-brain/: no exception, and no call answers an error envelope."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .forestkit import REPO, copy_sample

README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, flags=re.DOTALL | re.MULTILINE)

# The README's inline Python, run against the example forest as written there (its
# "deny=[...]" elides a list: run with an empty one).
INLINE = [
    'vine.call("locate", {"query": "...", "k": 3})',
    'with vine.visibility(allow=["sales/"], deny=[',
    "CALLS[name].output_schema()",
]

# Runs a block with every expression statement's value checked: a call that answers
# {"error": ...} fails the block, naming the line.
RUNNER = """
import ast, sys
source = open(sys.argv[1], encoding="utf-8").read()
tree = ast.parse(source)

class Check(ast.NodeTransformer):
    def visit_Expr(self, node):
        where = ast.Constant(node.lineno)
        call = ast.Call(ast.Name("_checked", ast.Load()), [node.value, where], [])
        return ast.copy_location(ast.Expr(call), node)

def _checked(value, line):
    if isinstance(value, dict) and set(value) == {"error"}:
        raise SystemExit(f"line {line} answered {value}")
    return value

code = compile(ast.fix_missing_locations(Check().visit(tree)), sys.argv[1], "exec")
exec(code, {"_checked": _checked, "__name__": "__main__"})
"""


def test_the_readme_has_its_python_examples() -> None:
    assert len(BLOCKS) >= 2
    for snippet in INLINE:
        assert snippet in README, snippet


def run_block(folder: Path, source: str) -> subprocess.CompletedProcess[str]:
    (folder / "example.py").write_text(source, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-c", RUNNER, "example.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("n", range(len(BLOCKS)), ids=lambda n: f"block{n + 1}")
def test_each_python_block_runs_on_its_own(tmp_path: Path, n: int) -> None:
    copy_sample(tmp_path / "sample-brain")
    done = run_block(tmp_path, BLOCKS[n])
    assert done.returncode == 0, f"README python block {n + 1}:\n{BLOCKS[n]}\n{done.stderr}"


def test_the_inline_examples_run(tmp_path: Path) -> None:
    copy_sample(tmp_path / "sample-brain")
    source = textwrap.dedent(
        f"""
        from monkeyllm import CALLS, Vine

        with Vine("sample-brain", writable=False) as vine:
            {INLINE[0]}
            vine.call("locate", {{"query": "exchange policy deadlines", "k": 3}})
            {INLINE[1]}]):
                vine.coverage()
            for name in CALLS:
                {INLINE[2]}
        """
    )
    done = run_block(tmp_path, source)
    assert done.returncode == 0, done.stderr
