"""Helpers the answer tests share: a model served on 127.0.0.1 and the Station it answers
for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from monkeyllm.serve.station.answer import bindings
from monkeyllm.serve.station.store import Store

QUESTION = "what is the deadline to exchange a retail order?"


CITED = "Retail returns close 30 days after the invoice date [sales/exchange-policy]."


SECRET_KEY_VALUE = "sk-test-SECRETVALUE-0123456789"


def _bind(root: Path, url: str, **extra: Any) -> bindings.Binding:
    with Store(root) as store:
        return bindings.put(
            store, bindings.Binding(forest="acme", endpoint=url, model="kit-model", **extra)
        )


def ask(
    st: dict[str, Any], body: dict[str, Any], key: str = "ans", forest: str = "acme"
) -> httpx.Response:
    return st["client"].post(
        f"/v1/forests/{forest}/answer", json=body, headers={"Authorization": f"Bearer {st[key]}"}
    )
