"""An OpenAI-compatible embeddings server on 127.0.0.1 for the Canopy's tests: a small
Starlette app served by uvicorn in a thread, answering ``POST /v1/embeddings``.

Its vectors are a hashed bag of words (each folded word adds 1 to a dimension its hash
picks; a few words share one, so that "handover timeframes" meets "exchange windows"),
which is enough to rank a paraphrase. It records every request, and can be told to fail
(an HTTP error), to answer slowly, or to answer garbage. The provider is an external
service: the test double sits at the socket, and everything from the engine to it is
the real code.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import socket
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

DIM = 64
# Words the fake model treats as one meaning.
SYNONYMS = {"handover": "exchange", "timeframes": "windows", "troca": "exchange"}


def vector(text: str, dim: int = DIM) -> list[float]:
    """The fake model's embedding of ``text``."""
    out = [0.0] * dim
    folded = unicodedata.normalize("NFKD", text.lower())
    for word in re.findall(r"[a-z0-9]+", folded):
        word = SYNONYMS.get(word, word)
        slot = int(hashlib.sha1(word.encode()).hexdigest(), 16) % dim
        out[slot] += 1.0
    if not any(out):
        out[0] = 1.0
    return out


@dataclass
class Seen:
    """One request received."""

    authorization: str | None
    body: Any


@dataclass
class EmbedServer:
    """The server; ``url`` is the base to configure (``.../v1``)."""

    model: str = "kit-embed"
    dim: int = DIM
    mode: str = "ok"  # ok | fail | slow | garbage
    sleep_s: float = 0.0
    requests: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def embeddings(request: Request) -> Response:
            body = await request.json()
            self.requests.append(Seen(request.headers.get("authorization"), body))
            if self.mode == "slow":
                await asyncio.sleep(self.sleep_s)
            if self.mode == "fail":
                return JSONResponse({"error": {"message": "model is overloaded"}}, status_code=503)
            if self.mode == "garbage":
                return Response(b"<html>not json</html>", media_type="text/html")
            inputs = body.get("input")
            inputs = [inputs] if isinstance(inputs, str) else inputs
            data = [
                {"object": "embedding", "index": i, "embedding": vector(t, self.dim)}
                for i, t in enumerate(inputs)
            ]
            return JSONResponse(
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            )

        self.app = Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The API base: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def start(self) -> EmbedServer:
        import uvicorn

        config = uvicorn.Config(self.app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._sock.close()

    def __enter__(self) -> EmbedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
