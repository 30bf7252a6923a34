"""Classifying SQL before it reaches a payload.

sqlglot parses the statement so a verdict rests on structure, not keywords:
``SELECT 'update' AS x`` is a read, while every write, ATTACH, PRAGMA and
multi-statement text is refused. The read-only connection and the SQLite
authorizer stay the real control; this module makes the refusals clear.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import budget, hints
from .errors import QueryForbidden, QueryInvalid

if TYPE_CHECKING:
    from sqlglot import exp


@lru_cache(maxsize=1)
def _sqlglot() -> Any:
    """sqlglot and the expression classes the guard needs, imported on first use (it
    is the heaviest import of the engine, and most calls never parse SQL)."""
    import logging

    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    # sqlglot logs a warning for syntax it parses as an opaque command (VACUUM INTO ...);
    # the guard refuses those itself, and a CLI or MCP server must not print it.
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    return SimpleNamespace(
        parse=sqlglot.parse,
        exp=exp,
        errors=(ParseError, TokenError),
        writes=(
            exp.Insert,
            exp.Update,
            exp.Delete,
            exp.Create,
            exp.Drop,
            exp.Alter,
            exp.Command,
            exp.Pragma,
            exp.Attach,
            exp.Detach,
            exp.TruncateTable,
            exp.Merge,
            exp.Transaction,
            exp.Commit,
            exp.Rollback,
            exp.Analyze,
            exp.Copy,
            exp.Use,
            exp.Set,
        ),
        reads=(exp.Select, exp.SetOperation),
        dml={exp.Insert: "INSERT", exp.Update: "UPDATE", exp.Delete: "DELETE"},
    )


_DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
MAX_SQL_CHARS = 100_000


@dataclass(frozen=True)
class Verdict:
    """A statement that passed the guard: its text to run and what was decided."""

    sql: str
    verb: str
    limit_injected: bool = False


_SYNTAX_HINT = "One SQLite statement, e.g. SELECT col FROM t WHERE ..."
_NEAR = re.compile(r'^(?:near "(.*)": syntax error|unrecognized token: "(.*)")$', re.DOTALL)


def _parse(sql: str) -> exp.Expression:
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    if not text:
        raise QueryInvalid("empty SQL statement")
    if len(text) > MAX_SQL_CHARS:
        raise QueryForbidden(f"statement is {len(text)} characters; the limit is {MAX_SQL_CHARS}")
    try:
        statements = [s for s in _sqlglot().parse(text, read="sqlite") if s is not None]
    except _sqlglot().errors as exc:
        _refuse_bad_syntax(text)
        message = str(exc).split("\n")[0]
        raise QueryInvalid(f"SQL syntax error: {message}", hint=_SYNTAX_HINT) from None
    except RecursionError:
        raise QueryForbidden("statement is nested too deeply to check") from None
    if len(statements) != 1:
        raise QueryForbidden(
            "only one statement per call", hint="Send each statement in its own call."
        )
    tree = statements[0]
    if not isinstance(tree, (*_sqlglot().reads, *_sqlglot().writes, _sqlglot().exp.Values)):
        # An expression, not a statement ("hello world" reads as a column and its
        # alias): what SQLite itself says of it decides.
        _refuse_bad_syntax(text)
    return tree


def _syntax_verdict(text: str) -> str | None:
    """SQLite's own complaint about the syntax of ``text`` (compiled on an empty
    in-memory database that may do nothing at all), or None when it parses."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        conn.set_authorizer(lambda *_: sqlite3.SQLITE_DENY)
        explained = text if text[:7].upper() == "EXPLAIN" else "EXPLAIN " + text
        try:
            conn.execute(explained)
        except sqlite3.Warning:
            return None  # more than one statement: the count is checked elsewhere
        except sqlite3.Error as exc:
            message = str(exc)
            if _NEAR.match(message) or message == "incomplete input":
                return message
        return None
    finally:
        conn.close()


def _refuse_bad_syntax(text: str) -> None:
    """``E_QUERY_INVALID`` naming where SQLite stops reading ``text``, if it does."""
    message = _syntax_verdict(text)
    if message is None:
        return
    at = _error_offset(text, message)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    found = _NEAR.match(message)
    if found is None:
        what = "the statement ends too early"
    elif found.group(1) is not None:
        what = f'near "{found.group(1)}"'
    else:
        what = f'unrecognized token "{found.group(2)}"'
    raise QueryInvalid(
        f"SQL syntax error at line {line}, column {column}: {what}",
        hint=_SYNTAX_HINT,
        line=line,
        column=column,
    )


def _error_offset(text: str, message: str) -> int:
    """Where in ``text`` SQLite's complaint points: the first occurrence of the token
    it names after which the statement can no longer be read (a prefix ending with an
    earlier, innocent occurrence still reads as an unfinished statement)."""
    found = _NEAR.match(message)
    if found is None:
        return len(text)
    token = found.group(1) if found.group(1) is not None else found.group(2)
    if not token:
        return len(text)
    spots = [m.start() for m in re.finditer(re.escape(token), text)]
    if not spots:
        return 0
    # Once a prefix holds the offending token, every longer one fails the same way:
    # bisect for the first such occurrence.
    lo, hi = 0, len(spots) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _syntax_verdict(text[: spots[mid] + len(token)]) == message:
            hi = mid
        else:
            lo = mid + 1
    return spots[lo]


def _names(tree: exp.Expression) -> list[str]:
    exp = _sqlglot().exp
    found = []
    for node in tree.walk():
        if isinstance(node, exp.Table):
            found.append(node.name.lower())
        elif isinstance(node, exp.Anonymous | exp.Func):
            found.append(
                (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            )
    return found


def _refuse_hidden(tree: exp.Expression) -> None:
    for node in tree.walk():
        if isinstance(node, _sqlglot().writes):
            raise QueryForbidden(
                f"statement contains {type(node).__name__.upper()}, which is not allowed here"
            )
    for name in _names(tree):
        if name.startswith("pragma_"):
            raise QueryForbidden(f"{name} is a PRAGMA function and is not allowed")
        if name in _DENIED_FUNCTIONS:
            raise QueryForbidden(f"function {name}() is not allowed")


def _verb(tree: exp.Expression) -> str:
    """What a statement is, as its author wrote it (``REPLACE``, ``EXPLAIN``, ``DROP``)."""
    if isinstance(tree, _sqlglot().exp.Command):
        return str(tree.this).upper()
    return type(tree).__name__.upper()


@lru_cache(maxsize=512)
def check_read(sql: str, row_limit: int) -> Verdict:
    """Guard a ``query`` statement: one SELECT (or WITH ... SELECT), nothing else.

    Injects ``LIMIT row_limit`` when the top-level statement has none.
    """
    tree = _parse(sql)
    if not isinstance(tree, _sqlglot().reads):
        verb = _verb(tree)
        raise QueryForbidden(
            f"query is read-only: {verb} is not allowed",
            hint="Use SELECT (or WITH ... SELECT); rows are written with "
            f"{hints.call('tend', 'id', 'sql')}.",
        )
    _refuse_hidden(tree)
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    if tree.args.get("limit") is None:
        return Verdict(f"{text}\nLIMIT {row_limit}", "SELECT", limit_injected=True)
    return Verdict(text, "SELECT")


@lru_cache(maxsize=512)
def check_write(sql: str) -> Verdict:
    """Guard a ``tend`` statement: one INSERT, or UPDATE/DELETE with a WHERE."""
    tree = _parse(sql)
    verb = next((v for cls, v in _sqlglot().dml.items() if isinstance(tree, cls)), None)
    if verb is None:
        raise QueryForbidden(
            f"tend takes one INSERT, UPDATE or DELETE, not {_verb(tree)}",
            hint=f"Read rows with {hints.call('query', 'id', 'sql')}; change them with "
            "INSERT, UPDATE ... WHERE, or "
            "DELETE ... WHERE.",
        )
    if verb in ("UPDATE", "DELETE") and tree.args.get("where") is None:
        raise QueryForbidden(
            f"{verb} without WHERE is not allowed",
            hint="Add a WHERE clause; to touch every row say WHERE 1=1.",
        )
    for node in tree.walk():
        if node is not tree and isinstance(node, _sqlglot().writes):
            raise QueryForbidden(f"statement hides {type(node).__name__.upper()} inside")
    for name in _names(tree):
        if name.startswith("pragma_") or name in _DENIED_FUNCTIONS:
            raise QueryForbidden(f"{name} is not allowed")
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return Verdict(text, verb)


# SQLite authorizer action codes allowed for reads.
_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_WRITE_ACTIONS = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}


def authorizer(*, allow_writes: bool, tables: frozenset[str] | None = None):  # noqa: ANN201
    """An SQLite authorizer: reads (and, for tend, row writes) on allowed tables only."""

    def decide(
        action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        if action == sqlite3.SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            return sqlite3.SQLITE_DENY if name in _DENIED_FUNCTIONS else sqlite3.SQLITE_OK
        if action in _READ_ACTIONS or (allow_writes and action in _WRITE_ACTIONS):
            table = (arg1 or "").lower()
            if action in (sqlite3.SQLITE_READ, *_WRITE_ACTIONS):
                if table.startswith("pragma_"):
                    return sqlite3.SQLITE_DENY
                if table.startswith("sqlite_") and action != sqlite3.SQLITE_READ:
                    return sqlite3.SQLITE_DENY
                if tables is not None and table not in tables and not table.startswith("sqlite_"):
                    return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        if allow_writes and action == sqlite3.SQLITE_TRANSACTION:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    return decide


_LENGTH_LIMIT = 16 * 1024 * 1024


def guard_connection(
    conn: sqlite3.Connection, *, allow_writes: bool, tables: frozenset[str] | None = None
) -> list[float]:
    """Install the authorizer, size limits and the 2-second deadline; returns the
    mutable deadline holder (set ``[0]`` to the start time before running)."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _LENGTH_LIMIT)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS + 64)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    started = [time.perf_counter()]

    def progress() -> int:
        return 1 if time.perf_counter() - started[0] > budget.QUERY_SECONDS else 0

    conn.set_progress_handler(progress, 1000)
    conn.set_authorizer(authorizer(allow_writes=allow_writes, tables=tables))
    return started
