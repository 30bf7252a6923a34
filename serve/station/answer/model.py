"""One chat completion from a forest's bound model (the OpenAI-compatible API that
Ollama, llama.cpp's server, vLLM and hosted providers all speak).

Every failure is an envelope: no answer within the binding's deadline is
``E_TIMEOUT``; an unreachable provider, an HTTP error, a reply that is not JSON or
has no choices is ``E_PROVIDER``. No message ever carries the API key.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from monkeyllm.errors import ProviderError, Timeout, provider_detail

from .bindings import Binding

TEMPERATURE = 0.1
DETAIL_CHARS = 200
_HINT = (
    "Check the forest's binding (vine station bindings) and that the provider is "
    "up; rebind with vine station bind."
)


@dataclass
class Reply:
    """What the model said, how long it took and what the provider metered."""

    text: str
    ms: float
    prompt: int = 0
    completion: int = 0
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


# Half of a UTF-16 surrogate pair: a JSON escape can carry one (a reply cut in the
# middle of an emoji), but it is not text, and neither the answer cache nor a reply
# can hold it.
_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")


def _text(value: Any) -> Any:
    """``value`` (a decoded reply) with every lone surrogate in its strings replaced by
    U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, dict):
        return {_text(k): _text(v) for k, v in value.items()}
    return value


def chat(binding: Binding, messages: list[dict[str, str]], max_tokens: int) -> Reply:
    """POST ``{endpoint}/chat/completions``; the whole exchange is bounded by the
    binding's ``timeout_s``."""
    key = os.environ.get(binding.api_key_env) if binding.api_key_env else None
    if binding.api_key_env and not key:
        raise ProviderError(
            f"the API key variable {binding.api_key_env} is not set on the Station",
            hint="Set it where the Station runs, or "
            "rebind with vine station bind --api-key-env VAR.",
        )
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body = {
        "model": binding.model,
        "messages": messages,
        "temperature": TEMPERATURE,
        "max_tokens": max_tokens,
    }
    started = time.perf_counter()
    deadline = time.monotonic() + binding.timeout_s
    try:
        status, raw = _post(binding, headers, body, deadline)
    except httpx.TimeoutException:
        raise _late(binding) from None
    except httpx.HTTPError as exc:
        raise ProviderError(
            f"could not reach the model provider at {binding.endpoint} ({_cause(exc)})", hint=_HINT
        ) from None
    ms = round((time.perf_counter() - started) * 1000, 2)
    if status >= 400:
        detail = _text(provider_detail(raw, key, DETAIL_CHARS))
        raise ProviderError(
            f"the model provider answered HTTP {status}" + (f": {detail}" if detail else ""),
            hint=_HINT,
            provider_status=status,
        )
    try:
        data = _text(json.loads(raw))
    except ValueError:
        raise ProviderError("the model provider's reply is not JSON", hint=_HINT) from None
    choice = _first_choice(data)
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    text = message.get("content")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    finish = choice.get("finish_reason")
    return Reply(
        text=text if isinstance(text, str) else "",
        ms=ms,
        prompt=_count(usage.get("prompt_tokens")),
        completion=_count(usage.get("completion_tokens")),
        finish_reason=finish if isinstance(finish, str) else None,
        raw=data,
    )


def _post(
    binding: Binding, headers: dict[str, str], body: dict[str, Any], deadline: float
) -> tuple[int, bytes]:
    """Status and body, read in chunks so a trickling reply still meets the deadline."""
    url = binding.endpoint.rstrip("/") + "/chat/completions"
    chunks: list[bytes] = []
    with (
        httpx.Client(timeout=httpx.Timeout(binding.timeout_s)) as client,
        client.stream("POST", url, json=body, headers=headers) as response,
    ):
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("deadline passed")
        return response.status_code, b"".join(chunks)


def _late(binding: Binding) -> Timeout:
    return Timeout(
        f"the model provider did not answer within {binding.timeout_s:g} s",
        hint="Retry, ask for a shorter reply (reply_tokens), or rebind with a "
        "longer --timeout (vine station bind).",
    )


def _cause(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or host unreachable"
    return type(exc).__name__


def _first_choice(data: Any) -> dict[str, Any]:
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError("the model provider's reply has no choices", hint=_HINT)
    return choices[0]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
