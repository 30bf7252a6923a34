"""Standard input and the protocol's output as the event loop's own pipes.

The SDK's stdio transport reads and writes through ``anyio.wrap_file``: every line read,
every write and every flush is a hop to a worker thread and back, several per call.
When both ends are pipes (how an MCP client starts a server), the event loop can watch
them itself: :func:`open_pipes` answers a line reader and a writer with the interface
the SDK's ``stdio_server`` takes, or None where a pipe is not possible (a regular file
or a terminal), and the SDK's own threads serve instead.

While the pipes serve, descriptor 0 reads the null device, as the SDK arranges for its
own: a child process (git) never reads a byte of the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from typing import Any

# A JSON-RPC line longer than this (an upload is at most a few MiB) is skipped whole.
MAX_LINE = 256 << 20

# JSON's escapes, one at a time from the left (so an escaped backslash is never read as
# the start of another): a surrogate pair, a lone surrogate, or any other escape.
_ESCAPE = re.compile(
    r"\\(?:(?P<pair>u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?P<lone>u[dD][89a-fA-F][0-9a-fA-F]{2})|.)",
    re.DOTALL,
)


def _keep_or_replace(match: re.Match[str]) -> str:
    return "\\ufffd" if match.group("lone") else match.group(0)


def without_lone_surrogates(line: str) -> str:
    """``line`` with each escaped lone surrogate (``\\ud800`` not followed by its low
    half, or a low half alone) escaped as U+FFFD instead. JSON's grammar allows one,
    but the SDK's parser refuses the line, and the SDK drops a line it cannot parse
    without an answer: the client would wait for ever. Replaced, the call is answered
    (as bad UTF-8 bytes are, replaced when the line is decoded)."""
    if "\\u" not in line:
        return line
    return _ESCAPE.sub(_keep_or_replace, line)


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class Lines:
    """The lines of a pipe, decoded as UTF-8 (bad bytes replaced), as ``async for``
    reads them (:class:`HeldLines` mends them)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if not end.partial:
                raise StopAsyncIteration from None
            line = end.partial
        except asyncio.LimitOverrunError:
            await self._skip_line()
            return ""  # not JSON: the SDK answers it as a parse error
        return line.decode("utf-8", errors="replace")

    async def _skip_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as over:
                await self._reader.readexactly(over.consumed)
            except asyncio.IncompleteReadError:
                return


class Writer:
    """Text written to a pipe: ``write`` queues it, ``flush`` waits until the pipe
    has taken it (so a client that stops reading holds back this writer only). Once
    the client has closed its end, what is written goes nowhere."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._gone = False

    async def write(self, text: str) -> None:
        if not self._gone:
            self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        if self._gone:
            return
        try:
            await self._writer.drain()
        except ConnectionError:
            self._gone = True


def _pipes_possible(protocol_out: int) -> bool:
    """Both ends are pipes, and the protocol's is not standard error's too (the event
    loop makes its pipe non-blocking, which a shared one would make for stderr)."""
    if sys.platform == "win32" or not (_is_pipe(0) and _is_pipe(protocol_out)):
        return False
    try:
        out, err = os.fstat(protocol_out), os.fstat(2)
    except OSError:
        return True
    return (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino)


@contextlib.asynccontextmanager
async def open_pipes(protocol_out: int) -> AsyncIterator[tuple[Lines, Writer] | None]:
    """Standard input and ``protocol_out`` as the event loop's pipes, or None when
    that is not possible (the caller serves through the SDK's threads then). Standard
    input reads the null device meanwhile (:func:`standard_input_apart`)."""
    if not _pipes_possible(protocol_out):
        yield None
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    transports: list[asyncio.BaseTransport] = []
    # The read transport owns the duplicate of standard input (it closes it).
    with standard_input_apart() as wire_in:
        try:
            read_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
            )
            transports.append(read_transport)
            write_transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, os.fdopen(protocol_out, "wb", buffering=0)
            )
            transports.append(write_transport)
            writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
            yield Lines(reader), Writer(writer)
        finally:
            for transport in transports:
                transport.close()


# How long the end of input waits for the calls still running to answer.
SETTLE_S = 60.0
# A response as the SDK writes it (pydantic's field order): its id, then result or error.
_ANSWER = re.compile(r'^\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')


def _key(value: object) -> tuple[str, object] | None:
    """A JSON-RPC id as a set member (``1`` and ``"1"`` are different ids)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | str):
        return (type(value).__name__, value)
    return None


class Ledger:
    """The requests read and not yet answered. A client that writes its requests and
    closes its end at once (a shell script's batch) still gets every answer: the end of
    input waits for the calls still running (up to :data:`SETTLE_S`) before the server
    hears of it, since the SDK answers what is in flight at the end of input with
    "Connection closed"."""

    def __init__(self, settle_s: float = SETTLE_S) -> None:
        self._open: set[tuple[str, object]] = set()
        self._written: list[tuple[str, object]] = []
        self._idle: asyncio.Event | None = None
        self.settle_s = settle_s

    def asked(self, line: str) -> str | None:
        """Record the request of one line read. A request the SDK would drop unanswered
        (not a JSON-RPC request's shape, a batch, a line that is not JSON) is answered
        here instead: the error line to write is returned, and the line is not passed
        on."""
        if '"method"' not in line or '"id"' not in line:
            head = line.lstrip()[:1]
            if head and head not in "{[":
                return _PARSE_ERROR  # not JSON at all: JSON-RPC answers it, with id null
            return None  # a notification, an answer to the server, or not JSON-RPC
        try:
            data = json.loads(line)
        except ValueError:
            return _PARSE_ERROR
        messages = data if isinstance(data, list) else [data]
        refused = []
        for message in messages:
            if not isinstance(message, dict) or "method" not in message:
                continue
            key = _key(message.get("id"))
            if key is None:
                continue  # a notification
            if isinstance(data, dict) and _request_shaped(message, line):
                self._open.add(key)
            else:
                refused.append(_invalid(message["id"], isinstance(data, list)))
        return "".join(refused) or None

    def wrote(self, text: str) -> None:
        """Note the answers among what is being written (counted once flushed)."""
        if not self._open:
            return
        match = _ANSWER.match(text)
        if match is not None:
            key = _key(json.loads(match.group(1)))
        else:
            try:
                data = json.loads(text)
            except ValueError:
                return
            if not isinstance(data, dict) or not ("result" in data or "error" in data):
                return
            key = _key(data.get("id"))
        if key is not None:
            self._written.append(key)

    def flushed(self) -> None:
        """What was written has gone out: those requests are answered."""
        for key in self._written:
            self._open.discard(key)
        self._written.clear()
        if not self._open and self._idle is not None:
            self._idle.set()

    async def settle(self) -> None:
        """Wait until every request read is answered, or :attr:`settle_s` passed."""
        if not self._open:
            return
        self._idle = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self.settle_s)


def _request_shaped(message: dict[str, Any], line: str) -> bool:
    """Whether the SDK takes ``message`` as a request (the cheap check first; the SDK's
    own model decides what the cheap one would refuse)."""
    ident, params = message.get("id"), message.get("params")
    if (
        message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and isinstance(ident, int | str)
        and not isinstance(ident, bool)
        and (params is None or isinstance(params, dict))
    ):
        return True
    import mcp_types

    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return False
    return True


_PARSE_ERROR = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error: each line must be one JSON-RPC 2.0 message",
            },
        },
        separators=(",", ":"),
    )
    + "\n"
)


def _invalid(ident: object, batch: bool) -> str:
    why = (
        "batches are not supported: send one request per line"
        if batch
        else 'not a JSON-RPC 2.0 request (jsonrpc "2.0", a method, an id, params an object)'
    )
    error = {"code": -32600, "message": f"Invalid Request: {why}"}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}, separators=(",", ":")) + "\n"


class HeldLines:
    """The lines of ``inner``, escaped lone surrogates mended (see
    :func:`without_lone_surrogates`) and each request recorded in ``ledger``; the end of
    input is passed on once the ledger has settled."""

    def __init__(self, inner: AsyncIterable[str], ledger: Ledger, out: CountedWriter) -> None:
        self._inner = inner.__aiter__()
        self._ledger = ledger
        self._out = out  # where a request the SDK would drop is answered

    def __aiter__(self) -> HeldLines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._inner.__anext__()
            except StopAsyncIteration:
                await self._ledger.settle()
                raise
            line = without_lone_surrogates(line)
            refused = self._ledger.asked(line)
            if refused is None:
                return line
            await self._out.answer(refused)


class CountedWriter:
    """``inner`` (``write`` and ``flush``), telling ``ledger`` what was answered."""

    def __init__(self, inner: Any, ledger: Ledger) -> None:
        self._inner = inner
        self._ledger = ledger
        self._lock = asyncio.Lock()  # whole lines: the SDK's and :meth:`answer`'s

    async def write(self, text: str) -> None:
        self._ledger.wrote(text)
        async with self._lock:
            await self._inner.write(text)

    async def flush(self) -> None:
        await self._inner.flush()
        self._ledger.flushed()

    async def answer(self, lines: str) -> None:
        """Write lines of this transport's own (an answer the SDK would not give)."""
        async with self._lock:
            await self._inner.write(lines)
            await self._inner.flush()


@contextlib.contextmanager
def standard_input_apart() -> Iterator[int]:
    """A private duplicate of standard input, descriptor 0 reading the null device
    meanwhile (a child process never reads the protocol), put back at the end."""
    wire = os.dup(0)
    saved = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield wire
    finally:
        with contextlib.suppress(OSError):
            os.dup2(saved, 0)
        os.close(saved)
