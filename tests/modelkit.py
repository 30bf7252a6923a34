"""A scripted OpenAI-compatible model server on 127.0.0.1, for the Station's answer
tests: a real threaded HTTP server that records every request and replies from a
script (a queue of replies, or a callable), and can answer 500s, garbage or slowly.

The model is an external service, so a test double of it is the honest boundary:
everything between the Station and this socket is the real code.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted reply: a chat completion with ``content`` (the default), or an
    HTTP ``status`` with a raw ``body``, after ``sleep`` seconds."""

    content: str | None = None
    status: int = 200
    body: bytes | dict[str, Any] | None = None
    sleep: float = 0.0
    prompt_tokens: int = 100
    completion_tokens: int = 20
    finish_reason: str = "stop"


Script = Callable[[dict[str, Any]], "Reply | str"]


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: str = field(repr=False)


class ModelServer:
    """The scripted server; ``url`` is the base to bind (``.../v1``)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.queue: list[Reply | str] = []
        self.script: Script | None = None
        self.default = Reply("I do not know from this forest.")
        self._lock = threading.Lock()
        kit = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                seen = Recorded(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw
                )
                reply = kit._next(seen)
                if reply.sleep:
                    time.sleep(reply.sleep)
                payload = (
                    reply.body
                    if reply.body is not None
                    else {
                        "id": "chatcmpl-kit",
                        "object": "chat.completion",
                        "model": "kit",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": reply.finish_reason,
                                "message": {"role": "assistant", "content": reply.content},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    }
                )
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The API base to bind: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _next(self, seen: Recorded) -> Reply:
        with self._lock:
            self.requests.append(seen)
            if self.queue:
                item = self.queue.pop(0)
            elif self.script is not None:
                item = self.script(seen.body if isinstance(seen.body, dict) else {})
            else:
                item = self.default
        return Reply(item) if isinstance(item, str) else item

    def reply(self, *replies: Reply | str) -> None:
        """Forget earlier requests and script the next replies, in order."""
        with self._lock:
            self.requests.clear()
            self.queue = list(replies)
            self.script = None

    def start(self) -> ModelServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def dumps(self) -> str:
        """Every request body received, as one text (for leak checks)."""
        return "\n".join(r.raw for r in self.requests)


def tool(name: str, **args: Any) -> str:
    """A walk turn: the model asking for one tool."""
    return json.dumps({"tool": name, "args": args})
