"""Schemathesis against a real Station: the OpenAPI document is the contract, and the
server keeps it.

A Station runs on 127.0.0.1 over a copy of the sample forest, with a key holding every
capability and a (scripted) model bound for answer. Schemathesis reads
``/v1/openapi.json`` and runs every phase (examples, coverage, fuzzing; stateful has no
links to follow here) with every check on: no server error, documented statuses,
content types and headers, responses that match their schemas, what the schema allows
accepted and what it refuses refused (positive and negative data), auth enforced. The
forest is pinned to ``acme``; the document's own examples use real ids and SQL, and
``schemathesis_hooks`` gives the positive cases of query, tend, plant and graft real
statements and dialect values.
Bounded to about a minute; zero failures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monkeyllm.serve.station.answer import bindings
from monkeyllm.serve.station.store import Store

from .forestkit import REPO, copy_sample
from .modelkit import ModelServer
from .test_station import _key, _serve

CONFIG = """\
[parameters]
"path.forest" = "acme"
"""


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("schemathesis")
    copy_sample(root / "acme", git=True)
    key = _key(root, "fuzz", caps="read,query,write,tend,admin")[1]
    with ModelServer() as kit, _serve(root) as url:
        kit.script = lambda seen: "The deadline is thirty days [sales/exchange-policy]."
        with Store(root) as store:
            bindings.put(
                store,
                bindings.Binding(forest="acme", endpoint=kit.url, model="kit-model", timeout_s=5.0),
            )
        yield {"root": root, "url": url, "key": key}


def test_schemathesis_finds_nothing(station: dict[str, Any], tmp_path: Path) -> None:
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG, encoding="utf-8")
    st = Path(sys.executable).with_name("st")
    argv = [
        str(st) if st.exists() else "st",
        "--no-color",
        "--config-file",
        str(config),
        "run",
        station["url"] + "/v1/openapi.json",
        "--checks",
        "all",
        "-H",
        f"Authorization: Bearer {station['key']}",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        "40",
        "--seed",
        "21",
        "--workers",
        "1",
        "--max-time",
        "60",
        "--request-timeout",
        "30",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.schemathesis_hooks", "PYTHONPATH": str(REPO)}
    # Run from the temporary folder: Schemathesis keeps a cache beside where it runs.
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=240)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-20000:]
    generated = re.search(r"(\d+) generated", report)
    assert generated is not None and int(generated.group(1)) > 500, report[-4000:]
    for phase in ("Examples", "Coverage", "Fuzzing"):
        assert re.search(rf"✅ {phase}", report), (phase, report[-4000:])
