"""What an MCP client on the 1.x SDK pays per tool call against ``vine serve``.

The 1.x SDK's ``ClientSession`` checks a tool's ``outputSchema`` against its meta-schema
and then validates the result, on every call. Run it with a Python that has the 1.x SDK
(``python3 -m venv /tmp/mcp1 && /tmp/mcp1/bin/pip install 'mcp<2'``), pointing at the
``vine`` under test, from the repository root::

    /tmp/mcp1/bin/python -m bench.mcp_legacy --vine .venv/bin/vine --forest sample-brain

It prints the median round trip of ``look`` and ``locate`` over stdio. It imports only
the SDK, so it runs against any ``vine`` and with either SDK line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CALLS = (("look", {"id": "sales/exchange-policy"}), ("locate", {"query": "exchange deadline"}))


async def measure(vine: str, forest: str, rounds: int) -> dict[str, float]:
    """Median milliseconds per call of each of ``CALLS``, after five warm-up calls."""
    params = StdioServerParameters(
        command=vine,
        args=["serve", "--readonly", "-f", forest],
        env={"VINE_WATCH": "0", "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    figures = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        for name, arguments in CALLS:
            times = []
            for _ in range(rounds + 5):
                start = time.perf_counter()
                result = await session.call_tool(name, arguments)
                times.append((time.perf_counter() - start) * 1000)
                if getattr(result, "is_error", getattr(result, "isError", False)):
                    raise SystemExit(f"{name} answered an error: {result}")
            figures[name] = statistics.median(times[5:])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vine", default="vine", help="the vine executable to serve")
    parser.add_argument(
        "--forest",
        default="sample-brain",
        help="a forest with sales/exchange-policy (sample-brain)",
    )
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.vine, os.path.abspath(args.forest), args.rounds))
    for name, median in figures.items():
        print(f"{name:8} {median:7.2f} ms")


if __name__ == "__main__":
    main()
