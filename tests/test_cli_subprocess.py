"""The ``vine`` command line in real processes: the console script and ``python -m``,
pipes, exit codes, a second process holding the lock, a terminal, and what a read
command imports."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from .forestkit import copy_sample, git, head, node

MODULE = [sys.executable, "-m", "monkeyllm.commands"]
_BESIDE = Path(sys.executable).parent / "vine"
SCRIPT = [str(_BESIDE) if _BESIDE.exists() else shutil.which("vine") or "vine"]
ENTRY_POINTS = {"module": MODULE, "script": SCRIPT}

NOTE = node("sales/piped-note", "sales/_index", "Piped note", "Planted through a pipe.")
HEAVY = ("textual", "mcp", "starlette", "uvicorn", "pydantic", "anyio", "httpx")
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def environ(**extra: str) -> dict[str, str]:
    """This environment without anything that would choose the forest or the colours."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "VINE_FOREST",
            "NO_COLOR",
            "FORCE_COLOR",
            "TTY_COMPATIBLE",
            "TTY_INTERACTIVE",
            "COLUMNS",
            "LINES",
        )
    }
    env.update(extra)
    return env


def run(entry: list[str], *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """One ``vine`` process with its stdout and stderr captured (pipes, not a terminal)."""
    return subprocess.run(
        [*entry, *args], capture_output=True, text=True, input=input, env=environ(), timeout=60
    )


def cool(root: Path) -> None:
    """Forget the heat earlier reads deposited, so the CLI and the engine rank alike."""
    for suffix in ("", "-wal", "-shm"):
        (root / "_derived" / f"trails.db{suffix}").unlink(missing_ok=True)


def engine(root: Path, name: str, **args: Any) -> dict[str, Any]:
    """The engine's own answer, opened read-only as the CLI opens reads, its hints in
    the command line's words."""
    from monkeyllm.commands.spelling import CLI
    from monkeyllm.hints import spelled

    cool(root)
    with spelled(CLI), Vine(root, writable=False) as vine:
        return getattr(vine, name)(**args)


def one_json_line(stdout: str) -> Any:
    """stdout is exactly one JSON value followed by one newline."""
    assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
    return json.loads(stdout)


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-brain/ for reads."""
    return copy_sample(tmp_path_factory.mktemp("cli-proc") / "brain")


# -- pipes and exit codes ------------------------------------------------------------


READS = [
    (["look", "sales/exchange-policy"], "look", {"id": "sales/exchange-policy"}),
    (
        ["locate", "exchange policy deadlines", "-k", "2"],
        "locate",
        {"query": "exchange policy deadlines", "k": 2},
    ),
]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize(("argv", "name", "args"), READS, ids=["look", "locate"])
def test_piped_output_is_the_engines_object(
    forest: Path, entry: str, argv: list[str], name: str, args: dict[str, Any]
) -> None:
    cool(forest)
    proc = run(ENTRY_POINTS[entry], *argv, "-f", str(forest))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert one_json_line(proc.stdout) == engine(forest, name, **args)


def test_piped_error_is_the_envelope_and_one_stderr_line(forest: Path) -> None:
    proc = run(SCRIPT, "look", "nope/ghost", "-f", str(forest))
    assert proc.returncode == 1
    envelope = one_json_line(proc.stdout)
    assert envelope == engine(forest, "look", id="nope/ghost")
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vine: E_NOT_FOUND: ")


def test_usage_error_exits_2_and_prints_no_data(forest: Path) -> None:
    proc = run(MODULE, "locate", "x", "-k", "abc", "-f", str(forest))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "-k" in proc.stderr and "Traceback" not in proc.stderr


def test_call_reads_its_arguments_from_a_pipe(forest: Path) -> None:
    args = {"query": "exchange policy", "k": 2}
    cool(forest)
    proc = run(SCRIPT, "call", "locate", "-", "-f", str(forest), input=json.dumps(args))
    assert proc.returncode == 0, proc.stderr
    assert one_json_line(proc.stdout) == engine(forest, "locate", **args)


def test_plant_from_a_pipe_makes_one_commit(brain_copy: Path) -> None:
    before = head(brain_copy)
    proc = run(SCRIPT, "plant", "-", "-f", str(brain_copy), input=json.dumps(NOTE))
    assert proc.returncode == 0, proc.stderr
    out = one_json_line(proc.stdout)
    assert out["created"] is True and out["commit"] == head(brain_copy)
    assert len(git(brain_copy, "log", "--format=%s", f"{before}..HEAD").splitlines()) == 1


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_graft_tend_and_query_take_their_patch_or_sql_after_the_id(
    brain_copy: Path, entry: str
) -> None:
    vine = ENTRY_POINTS[entry]
    where = ("-f", str(brain_copy))
    before = head(brain_copy)
    patch = json.dumps({"set_frontmatter": {"tags": ["pricing", "second-argument"]}})
    graft = run(vine, "graft", "sales/price-list", patch, *where)
    assert graft.returncode == 0, graft.stderr
    assert one_json_line(graft.stdout)["commit"] == head(brain_copy) != before
    tags = engine(brain_copy, "look", id="sales/price-list", fields=["tags"])["tags"]
    assert "second-argument" in tags
    tend = run(vine, "tend", "sales/orders-2026", "DELETE FROM orders WHERE id = '1001'", *where)
    assert tend.returncode == 0, tend.stderr
    assert one_json_line(tend.stdout)["rows_affected"] == 1
    count = "SELECT COUNT(*) FROM orders WHERE id = '1001'"
    query = run(vine, "query", "sales/orders-2026", count, *where)
    assert query.returncode == 0, query.stderr
    assert one_json_line(query.stdout)["rows"] == [[0]]
    # Both spellings at once, or neither: a usage error that says how, and no commit.
    sealed = head(brain_copy)
    twice = run(vine, "graft", "sales/price-list", patch, "--patch", patch, *where)
    assert twice.returncode == 2 and twice.stdout == ""
    assert "given twice" in twice.stderr and "Traceback" not in twice.stderr
    missing = run(vine, "tend", "sales/orders-2026", *where)
    assert missing.returncode == 2 and missing.stdout == ""
    assert "--sql" in missing.stderr and "vine tend ID SQL" in missing.stderr
    assert head(brain_copy) == sealed


def test_a_writer_in_another_process_locks_out_writes_only(brain_copy: Path) -> None:
    hold = (
        "import sys\nfrom monkeyllm import Vine\nwith Vine(sys.argv[1]):\n"
        "    print('held', flush=True)\n    sys.stdin.read()\n"
    )
    before = head(brain_copy)
    with subprocess.Popen(
        [sys.executable, "-c", hold, str(brain_copy)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=environ(),
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            write = run(SCRIPT, "plant", json.dumps(NOTE), "-f", str(brain_copy))
            assert write.returncode == 1
            assert one_json_line(write.stdout)["error"]["code"] == "E_LOCKED"
            lines = write.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("vine: E_LOCKED: ")
            read = run(SCRIPT, "look", "sales/price-list", "-f", str(brain_copy))
            assert read.returncode == 0, read.stderr
            assert one_json_line(read.stdout)["id"] == "sales/price-list"
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
    assert head(brain_copy) == before


# -- what a read imports -------------------------------------------------------------


PROBE = """
import json, sys
out, sys.argv = sys.argv[1], ["vine", *json.loads(sys.argv[2])]
from monkeyllm.commands.main import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stdout.flush()
with open(out, "w") as fh:
    json.dump({"code": code, "modules": sorted(sys.modules)}, fh)
"""


@pytest.mark.parametrize(
    "argv", [["look", "sales/exchange-policy"], ["--help"]], ids=["look", "help"]
)
def test_read_commands_do_not_import_the_heavy_stacks(
    forest: Path, tmp_path: Path, argv: list[str]
) -> None:
    # The real packages where installed (vine serve needs mcp, starlette and uvicorn);
    # an empty stand-in for any that is not, so that an import of it still shows.
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in HEAVY:
        if importlib.util.find_spec(name) is None:
            (stubs / name).mkdir(parents=True)
            (stubs / name / "__init__.py").write_text("")
    report = tmp_path / "modules.json"
    env = environ(
        PYTHONPATH=os.pathsep.join(filter(None, [str(stubs), os.environ.get("PYTHONPATH")])),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )  # no kept help yet
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), json.dumps([*argv, "-f", str(forest)])],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(report.read_text())
    assert seen["code"] in (0, None), proc.stderr
    if argv[0] == "look":
        assert json.loads(proc.stdout)["id"] == "sales/exchange-policy"
    else:
        assert "Usage:" in proc.stdout
    loaded = {m.split(".")[0] for m in seen["modules"]}
    assert "monkeyllm" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert not [m for m in seen["modules"] if m.startswith("monkeyllm.serve")]
    # A plain call takes the hot path: no Typer (or its Click) at all.
    assert ("typer" in loaded) == (argv[0] == "--help"), argv


def test_the_top_level_help_is_kept_and_printed_without_typer(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    probe = [sys.executable, "-c", PROBE]

    def helped(columns: str) -> tuple[str, list[str]]:
        report = tmp_path / "modules.json"
        proc = subprocess.run(
            [*probe, str(report), json.dumps(["--help"])],
            capture_output=True,
            text=True,
            timeout=60,
            env=environ(XDG_CACHE_HOME=str(cache), COLUMNS=columns),
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, json.loads(report.read_text())["modules"]

    first, loaded = helped("80")
    assert "typer" in loaded and first.startswith("Usage: vine [OPTIONS] COMMAND")
    again, loaded = helped("80")
    assert again == first and "typer" not in loaded  # kept: no Typer at all
    narrow, loaded = helped("60")  # another width: rendered
    assert "typer" in loaded and narrow != first
    assert max(len(line) for line in narrow.splitlines()) <= 58
    assert len(list((cache / "monkeyllm").glob("help-*.txt"))) == 2
    cache = tmp_path / "not-a-folder"  # nowhere to keep it:
    cache.write_text("")  # rendered every time
    assert helped("80") == (first, helped("80")[1])
    assert "typer" in helped("80")[1]


# -- on a terminal -------------------------------------------------------------------


def run_in_terminal(*args: str, **env: str) -> tuple[int, str, str]:
    """Run ``vine ARGS`` with a pseudo-terminal as stdout: (exit code, terminal text,
    stderr)."""
    pty = pytest.importorskip("pty")
    try:
        master, slave = pty.openpty()
    except OSError as exc:  # no pseudo-terminals in this sandbox
        pytest.skip(f"no pseudo-terminal: {exc}")
    with subprocess.Popen(
        [*SCRIPT, *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=environ(COLUMNS="120", **env),
    ) as proc:
        os.close(slave)
        chunks: list[bytes] = []
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], deadline - time.monotonic())
                if not ready:
                    break
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
        finally:
            os.close(master)
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n"), stderr


def colours(text: str) -> set[int]:
    """The colour codes (foreground or background) among the text's SGR sequences."""
    found: set[int] = set()
    for params in SGR.findall(text):
        codes = [int(p) for p in params.split(";") if p]
        i = 0
        while i < len(codes):
            code = codes[i]
            if code in (38, 48):
                found.add(code)
                i += 3 if codes[i + 1 : i + 2] == [5] else 5
                continue
            if 30 <= code <= 37 or 40 <= code <= 47 or 90 <= code <= 97 or 100 <= code <= 107:
                found.add(code)
            i += 1
    return found


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_terminal_gets_rich_output_in_colour(forest: Path) -> None:
    title = engine(forest, "look", id="sales/exchange-policy")["title"]
    code, out, err = run_in_terminal(
        "look", "sales/exchange-policy", "-f", str(forest), TERM="xterm-256color"
    )
    assert code == 0, err
    assert not is_json(CSI.sub("", out))
    assert title in CSI.sub("", out)
    assert colours(out), repr(out[:300])


def test_no_color_turns_the_colours_off(forest: Path) -> None:
    title = engine(forest, "look", id="sales/exchange-policy")["title"]
    code, out, err = run_in_terminal(
        "look", "sales/exchange-policy", "-f", str(forest), TERM="xterm-256color", NO_COLOR="1"
    )
    assert code == 0, err
    assert title in CSI.sub("", out)
    assert colours(out) == set(), repr(out[:300])


def test_json_flag_on_a_terminal(forest: Path) -> None:
    cool(forest)
    code, out, err = run_in_terminal(
        "look", "sales/exchange-policy", "--json", "-f", str(forest), TERM="xterm-256color"
    )
    assert code == 0, err
    assert json.loads(out) == engine(forest, "look", id="sales/exchange-policy")


def test_error_on_a_terminal_goes_to_stderr_only(forest: Path) -> None:
    code, out, err = run_in_terminal("look", "nope/ghost", "-f", str(forest), TERM="xterm-256color")
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vine: E_NOT_FOUND: ")


@pytest.mark.skipif(not hasattr(signal, "SIGPIPE"), reason="no SIGPIPE here")
@pytest.mark.parametrize(
    "args", [["look", "sales/exchange-policy"], ["--help"]], ids=["look", "help"]
)
def test_a_reader_that_hangs_up_ends_vine_quietly(forest: Path, args: list[str]) -> None:
    """`vine look x | head -c 10`: no BrokenPipeError traceback, the SIGPIPE status."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before vine writes
    try:
        proc = subprocess.run(
            [*SCRIPT, *args, "-f", str(forest)] if args[0] != "--help" else [*SCRIPT, *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=environ(),
        )
    finally:
        os.close(write)
    assert proc.returncode == -signal.SIGPIPE, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
