"""What a hint names, spelled the way the caller's surface spells it.

A hint that points at another call (``sniff(terms)``), a parameter (``section=<header>``)
or a way to open a forest is written once, in the engine, from structured parts: the
call's name, its parameters by name, literal values or placeholders. A
:class:`Spelling` renders them; this module's own is the call signature, which Python,
MCP and REST share (``pick(id, section=<header>)``). A surface with other words for the
same things (the command line: ``vine pick ID --section HEADER``) passes its own
spelling, for a block (:func:`spelled`) or for the process (:func:`use`), and every
hint the engine words inside it comes out in that spelling::

    hints.call("sniff", "terms")                    # sniff(terms)  |  vine sniff TERMS
    hints.call("scan", parent_id="_index")          # scan('_index')  |  vine scan _index
    hints.call("pick", "id", section=Hole("header"))
    hints.option("pick", "after", "")               # after=''  |  --after ''
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Hole:
    """A placeholder for a value the reader fills in, named ``label`` (the parameter's
    name when None)."""

    label: str | None = None


@dataclass(frozen=True)
class Arg:
    """One argument of a call a hint names: its parameter, and a literal value or a
    :class:`Hole`."""

    param: str
    value: Any


class Spelling:
    """How a surface writes calls, parameters and ways to open a forest: the engine's
    own spelling, the Python signature (which MCP tools and REST bodies share)."""

    name = "python"

    def call(self, call: str, args: list[Arg]) -> str:
        """A call with its arguments: ``pick(id, section=<header>)``."""
        first = _first_required(call)
        parts = []
        for arg in args:
            if isinstance(arg.value, Hole):
                # A bare name reads as "this parameter"; a label as "a value of it".
                parts.append(
                    arg.param if arg.value.label is None else f"{arg.param}=<{arg.value.label}>"
                )
            else:
                shown = repr(arg.value)
                parts.append(shown if arg.param == first else f"{arg.param}={shown}")
        return f"{call}({', '.join(parts)})"

    def option(self, call: str, arg: Arg) -> str:
        """One parameter of a call on its own: ``section=<header>``, ``after=''``."""
        if isinstance(arg.value, Hole):
            return f"{arg.param}=<{arg.value.label or arg.param}>"
        return f"{arg.param}={arg.value!r}"

    def parameter(self, call: str, param: str) -> str:
        """A parameter's name alone: ``k``, ``after``."""
        return param

    def create_forest(self) -> str:
        """How to make a new forest."""
        return "Vine.init(path, title)"

    def open_writable(self) -> str:
        """A sentence on how to write to a forest that is open read-only."""
        return "Open it with Vine(path) (writable) to plant, graft or tend."

    def open_forest(self) -> str:
        """How to work with a forest that exists."""
        return "open it with Vine(path)"

    def open_readonly(self) -> str:
        """How to read a forest while another process writes it."""
        return "open the forest read-only (Vine(path, writable=False)) to read beside it"


PYTHON = Spelling()
_process: list[Spelling] = [PYTHON]
_current: ContextVar[Spelling | None] = ContextVar("monkeyllm_spelling", default=None)


def current() -> Spelling:
    """The spelling in force here: the block's, else the process's, else Python's."""
    return _current.get() or _process[0]


def use(spelling: Spelling) -> None:
    """Make ``spelling`` the process's (a surface that owns its process: the TUI)."""
    _process[0] = spelling


@contextlib.contextmanager
def spelled(spelling: Spelling) -> Iterator[None]:
    """Hints worded inside the block (in this thread or task) use ``spelling``."""
    token = _current.set(spelling)
    try:
        yield
    finally:
        _current.reset(token)


def call(name: str, *holes: str, **values: Any) -> str:
    """A call as the current surface spells it: ``holes`` are parameters shown as
    placeholders, ``values`` literal values (or a :class:`Hole` with its own label), in
    the call's signature order."""
    args = [Arg(p, Hole()) for p in holes] + [Arg(p, v) for p, v in values.items()]
    return current().call(name, _ordered(name, args))


def option(call_name: str, param: str, value: Any = Hole()) -> str:
    """One parameter of ``call_name`` as the current surface spells it."""
    return current().option(call_name, Arg(param, value))


def parameter(call_name: str, param: str) -> str:
    """A parameter's name as the current surface spells it (``k`` or ``-k``)."""
    return current().parameter(call_name, param)


def create_forest() -> str:
    """How to create a forest, in the current surface's words."""
    return current().create_forest()


def open_writable() -> str:
    """How to write to a forest open read-only, as a sentence in the current surface's
    words."""
    return current().open_writable()


def open_forest() -> str:
    """How to work with an existing forest, in the current surface's words."""
    return current().open_forest()


def open_readonly() -> str:
    """How to read beside a writer, in the current surface's words."""
    return current().open_readonly()


def _ordered(name: str, args: list[Arg]) -> list[Arg]:
    """``args`` in the call's signature order (unknown parameters last)."""
    params = _params(name)
    order = {p: i for i, p in enumerate(params)}
    return sorted(args, key=lambda a: order.get(a.param, len(order)))


def _params(name: str) -> list[str]:
    from .registry import CALLS

    spec = CALLS.get(name)
    return [p.name for p in spec.params] if spec is not None else []


def _first_required(name: str) -> str | None:
    from .registry import CALLS

    spec = CALLS.get(name)
    if spec is None:
        return None
    return next((p.name for p in spec.params if p.required), None)
