"""``vine --help``, kept: the text Typer renders, stored once per version of the
command modules and terminal width, then printed without importing Typer or building
26 commands (about 100 ms of every ``vine --help``).

The key is the width Click wraps to and the size and modification time of every
module the help is made of (the command modules and the engine's calls), so an
upgrade, an edit of an editable install or a wider terminal renders it afresh. The
store is ``$XDG_CACHE_HOME/monkeyllm`` (else ``~/.cache/monkeyllm``); when it cannot
be read or written the help is rendered every time, as it always was.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

_HERE = Path(__file__).resolve().parent
MAX_WIDTH = 80  # Click's HelpFormatter default max_width


def key() -> str | None:
    """What the help depends on, as one line; None when it cannot be told."""
    width = max(min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2, 50)
    engine = sys.modules.get("monkeyllm.vine")
    sources = sorted(_HERE.glob("*.py"))
    if engine is not None and engine.__file__:
        sources.append(Path(engine.__file__))
    parts = [f"w{width}"]
    try:
        for path in sources:
            st = path.stat()
            parts.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return None
    return f"{_HERE}|" + "|".join(parts)


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "monkeyllm"


def _file(line: str) -> Path:
    return folder() / f"help-{zlib.crc32(line.encode('utf-8', 'surrogateescape')):08x}.txt"


def show(render: Callable[[], None]) -> None:
    """Print the top-level help: kept, or rendered by ``render`` (the Typer
    application, which exits) and kept for next time."""
    line = key()
    if line is not None:
        try:
            kept = _file(line).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            kept = ""
        head, sep, text = kept.partition("\n")
        if sep and head == line:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
    out = io.StringIO()
    code: object = 0
    with contextlib.redirect_stdout(out):
        try:
            render()
        except SystemExit as exc:
            code = exc.code
    text = out.getvalue()
    if line is not None and code in (0, None) and text:
        _keep(_file(line), line + "\n" + text)
    sys.stdout.write(text)
    sys.stdout.flush()
    if code not in (0, None):
        raise SystemExit(code)


def _keep(path: Path, text: str) -> None:
    """Write atomically (best effort: a help not kept is rendered next time)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
