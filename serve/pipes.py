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
import os
import re
import stat
import sys
from collections.abc import AsyncIterator

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
    reads them."""

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
        return without_lone_surrogates(line.decode("utf-8", errors="replace"))

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
    input reads the null device from here on."""
    if not _pipes_possible(protocol_out):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    reader = asyncio.StreamReader(limit=MAX_LINE)
    transports: list[asyncio.BaseTransport] = []
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
