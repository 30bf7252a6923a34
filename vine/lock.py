"""``.vine.lock``: the one-writer lock, a kernel ``flock`` with a card inside.

The card ``{"pid", "host", "since", "hold", "by"}`` only informs; the flock is the
lock, so a lock left by a dead process is free again and is reclaimed silently.
``hold`` says how long its holder keeps it: ``"per-write"`` (for one write, then it
lets go) or ``"while-open"`` (for as long as it keeps the forest open); ``by`` names the
program (``vine serve``, ``python sync.py``). A writer that finds the lock taken for
one write waits its turn, up to a timeout; one that finds it taken for as long as
another process stays open answers ``E_LOCKED`` at once, naming that process.
"""

from __future__ import annotations

import errno
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from . import hints
from .errors import Locked, SchemaError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".vine.lock"
PER_WRITE = "per-write"
WHILE_OPEN = "while-open"
HOLDS = (WHILE_OPEN, PER_WRITE)
TIMEOUT_ENV = "VINE_LOCK_TIMEOUT"
DEFAULT_TIMEOUT_S = 5.0
# How long a writer waits quietly before it tells whoever listens that it is waiting.
NOTICE_AFTER_S = 0.5
_ATTEMPTS = 4
_POLL_MIN_S = 0.001
_POLL_MAX_S = 0.01
# A process that wrote this recently gives way, up to this long, to another process's
# waiting writer: its own next write would otherwise win every time (it needs no poll).
_GIVE_WAY_S = 0.05
WAITERS = "lock-waiters"  # under _derived/: one empty file per waiting writer

# What the card says this process is; a surface that knows better (the command line:
# "vine serve") sets it when it starts.
PROGRAM: list[str] = []

Waiting = Callable[[dict[str, object]], None]


def program() -> str:
    """A few words naming this process for the card: ``vine serve``, ``python
    sync.py``, ``pytest``."""
    if PROGRAM:
        return PROGRAM[0]
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if argv0 in ("", "-c"):
        return "python -c" if argv0 == "-c" else "python"
    name = os.path.basename(argv0)
    if name == "__main__.py":
        name = os.path.basename(os.path.dirname(argv0)) or name
    return f"python {name}" if name.endswith(".py") else name


def set_program(words: str) -> None:
    """Name this process on every card it writes from now on (``vine plant``)."""
    PROGRAM[:] = [words]


def timeout_from_env(value: float | None) -> float:
    """The busy timeout to use: ``value`` when given, else ``$VINE_LOCK_TIMEOUT``, else
    five seconds.

    Raises:
        VineError: ``E_SCHEMA`` for a negative or non-numeric timeout.
    """
    source = "lock_timeout"
    if value is None:
        raw = os.environ.get(TIMEOUT_ENV)
        if raw is None or not raw.strip():
            return DEFAULT_TIMEOUT_S
        source = TIMEOUT_ENV
        try:
            value = float(raw)
        except ValueError:
            raise SchemaError(
                f"{TIMEOUT_ENV} must be a number of seconds, got {raw!r}",
                hint="0 answers E_LOCKED at once; 5 is the default.",
            ) from None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not value >= 0
        or value == float("inf")
    ):
        raise SchemaError(
            f"{source} must be a number of seconds >= 0, got {value!r}",
            hint="0 answers E_LOCKED at once; 5 is the default.",
        )
    return float(value)


def read_card(path: Path) -> dict[str, object]:
    """The card of a lock file (a legacy bare pid reads as ``{pid}``)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return {}
    try:
        card = json.loads(text)
    except ValueError:
        return {}
    if isinstance(card, int) and not isinstance(card, bool):
        return {"pid": card}
    return card if isinstance(card, dict) else {}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass
    return True


def _alive(card: dict[str, object]) -> bool:
    """False when the card names a process on this host that is gone."""
    import socket

    pid = card.get("pid")
    if isinstance(pid, int) and card.get("host") in (None, socket.gethostname()):
        return _pid_alive(pid)
    return True


def holder(root: Path) -> dict[str, object] | None:
    """The card of whoever holds ``root``'s writer lock right now, read without taking
    it (``{}`` when the card is unreadable); None when the forest is free, or when the
    card names a process that is gone on this host (a stale lock the next writer
    reclaims)."""
    path = root / LOCK_NAME
    if not path.exists():
        return None
    card = read_card(path)
    return card if _alive(card) else None


def holds_open(card: dict[str, object] | None) -> bool:
    """True for a card whose holder keeps the lock for as long as it stays open (its
    writes are not the only thing it holds it for)."""
    return bool(card) and card.get("hold") == WHILE_OPEN  # type: ignore[union-attr]


def _command_line(pid: object) -> str | None:
    """What a process on this host was started as (Linux), for a card that does not
    say (an older engine's)."""
    if not isinstance(pid, int):
        return None
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    if not words:
        return None
    words[0] = os.path.basename(words[0])
    text = " ".join(words)
    return text if len(text) <= 60 else text[:57] + "..."


def _program_of(card: dict[str, object]) -> str | None:
    """What the holder runs: its card's ``by``, else its command line on this host."""
    import socket

    by = card.get("by")
    if isinstance(by, str) and by:
        return by
    if card.get("host") in (None, socket.gethostname()):
        return _command_line(card.get("pid"))
    return None


def who(card: dict[str, object]) -> str:
    """The holder in a few words: ``pid 4242 on box (vine serve)``."""
    if not card:
        return "another process"
    text = f"pid {card.get('pid', '?')} on {card.get('host', '?')}"
    by = _program_of(card)
    return f"{text} ({by})" if by else text


def _describe(card: dict[str, object]) -> str:
    if not card:
        return "forest already has a writer"
    return (
        f"forest already has a writer (pid {card.get('pid', '?')} on "
        f"{card.get('host', '?')} since {card.get('since', '?')})"
    )


def _held_for(card: dict[str, object]) -> float | None:
    """Seconds since the card's ``since``, or None."""
    from datetime import UTC, datetime

    since = card.get("since")
    if not isinstance(since, str):
        return None
    try:
        then = datetime.strptime(since, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return max(0.0, (datetime.now(UTC) - then).total_seconds())


def locked_error(card: dict[str, object], waited: float | None = None) -> Locked:
    """``E_LOCKED`` for a lock ``card``'s holder keeps: the holder named, and what to do.
    The card itself rides along as ``holder``.

    Args:
        card: The holder's card (``{}`` when unreadable).
        waited: How long this writer waited before giving up, or None when it did not
            wait (the holder keeps the lock while it stays open).
    """
    by = _program_of(card)
    name = by or "it"
    pid = card.get("pid")
    that = f"that process (pid {pid})" if pid is not None else "that process"
    if holds_open(card):
        return Locked(
            f"{_describe(card)}: {name} keeps the lock for as long as it has the forest open",
            holder=card,
            hint=f"Stop {that}, or have it open the forest with Vine(path, "
            'lock="per-write") so it holds the lock only while it writes, as vine '
            f"serve, the Station and vine browse do; {hints.open_readonly()}.",
        )
    held = _held_for(card)
    for_how_long = f" for {held:.0f} s" if held is not None and held >= 1 else ""
    if card.get("hold") == PER_WRITE:
        return Locked(
            f"{_describe(card)}: {name} has been writing{for_how_long}, longer than the "
            f"{waited or 0:.1f} s this write waits",
            holder=card,
            hint=f"A long write (an ingest, a large batch) is in progress: try again when "
            f"it finishes, or wait longer ({TIMEOUT_ENV}=60, or lock_timeout=60 in "
            "Python).",
        )
    return Locked(
        f"{_describe(card)}: {name} has held the lock longer than the {waited or 0:.1f} s "
        "this write waits",
        holder=card,
        hint=f"If {that} keeps the forest open (an older engine, or a script), stop it or "
        "have it lock per write; the lock frees itself when its holder exits. "
        f"{TIMEOUT_ENV} sets how long a write waits.",
    )


class ForestLock:
    """The writer lock of one forest.

    Args:
        root: The forest's root.
        hold: What the card says about this holder: ``"while-open"`` or
            ``"per-write"``.
    """

    def __init__(self, root: Path, hold: str = WHILE_OPEN) -> None:
        self.path = root / LOCK_NAME
        self.hold = hold
        self._fd: int | None = None
        self._exclusive_file = False
        self._waiters = root / "_derived" / WAITERS
        self._released = float("-inf")

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self, timeout: float = 0.0, waiting: Waiting | None = None) -> None:
        """Take the lock, waiting up to ``timeout`` seconds while a write holds it.

        A holder that keeps the lock for as long as it stays open is not waited for.
        ``waiting`` is called once, with the holder's card, when the wait has lasted
        :data:`NOTICE_AFTER_S`. A writer that waits says so with a file in
        ``_derived/lock-waiters/``, so that a process that just wrote lets it go first.

        Raises:
            VineError: ``E_LOCKED`` naming the holder and what to do.
        """
        if self._fd is not None:
            return
        if fcntl is None:
            self._acquire_exclusive_file(timeout)
            return
        self._give_way()
        started = time.monotonic()
        deadline = started + timeout
        delay = _POLL_MIN_S
        noticed = False
        moved = 0
        marker: Path | None = None
        try:
            while True:
                fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    os.close(fd)
                    if exc.errno in (errno.ENOLCK, errno.ENOTSUP):
                        self._acquire_exclusive_file(timeout)
                        return
                    card = read_card(self.path)
                    now = time.monotonic()
                    if holds_open(card) or now >= deadline:
                        raise locked_error(
                            card, None if holds_open(card) else now - started
                        ) from None
                    if marker is None:
                        marker = self._queue()
                    if waiting is not None and not noticed and now - started >= NOTICE_AFTER_S:
                        noticed = True
                        waiting(card)
                    time.sleep(min(random.uniform(0.5, 1.0) * delay, max(0.0, deadline - now)))
                    delay = min(delay * 2, _POLL_MAX_S)
                    continue
                # A releaser unlinks while holding: make sure we locked the live file.
                try:
                    same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    self._fd = fd
                    self._write_card()
                    return
                os.close(fd)
                moved += 1
                if moved >= _ATTEMPTS and time.monotonic() >= deadline:
                    raise Locked(
                        "forest already has a writer (contended)",
                        hint="Another writer is taking the lock right now; try again.",
                    )
        finally:
            if marker is not None:
                marker.unlink(missing_ok=True)

    def _queue(self) -> Path | None:
        """Say that a writer waits here (None where ``_derived/`` cannot say it)."""
        marker = self._waiters / f"{os.getpid()}-{threading.get_ident()}"
        try:
            self._waiters.mkdir(exist_ok=True)
            marker.touch()
        except OSError:
            return None
        return marker

    def _others_wait(self) -> bool:
        """True while a live writer waits for this lock (a dead one's file goes)."""
        try:
            names = os.listdir(self._waiters)
        except OSError:
            return False
        for name in names:
            pid = name.partition("-")[0]
            if pid.isdigit() and _pid_alive(int(pid)):
                return True
            (self._waiters / name).unlink(missing_ok=True)
        return False

    def _give_way(self) -> None:
        """Right after this lock let go, let a writer that waits for it go first (it
        polls; this process's next write would not), for at most a moment."""
        if time.monotonic() - self._released > _GIVE_WAY_S:
            return
        until = time.monotonic() + _GIVE_WAY_S
        while time.monotonic() < until and self._others_wait():
            time.sleep(0.001)

    def try_acquire(self) -> bool:
        """Take the lock if it is free right now; False when someone holds it."""
        try:
            self.acquire(0.0)
        except Locked:
            return False
        return True

    def _acquire_exclusive_file(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
                break
            except FileExistsError:
                card = read_card(self.path)
                if holds_open(card) or time.monotonic() >= deadline:
                    err = locked_error(card, None if holds_open(card) else timeout)
                    err.hint = (err.hint or "") + " Remove the lock file if its holder is gone."
                    raise err from None
                time.sleep(_POLL_MAX_S)
        self._fd = fd
        self._exclusive_file = True
        self._write_card()

    def _write_card(self) -> None:
        assert self._fd is not None
        import socket
        from datetime import UTC, datetime

        card = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "hold": self.hold,
            "by": program(),
        }
        data = json.dumps(card).encode()
        # Written, then cut to its length (a dead holder's longer card may be there):
        # truncating to zero first makes ext4 flush, a millisecond per write.
        os.pwrite(self._fd, data, 0)
        os.ftruncate(self._fd, len(data))

    def release(self) -> None:
        """Unlink while still holding, then close."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None
        self._released = time.monotonic()
