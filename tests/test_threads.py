"""One Vine shared by several threads: reads never fail, writes serialize."""

from __future__ import annotations

import threading
from pathlib import Path

from monkeyllm import Vine

from .forestkit import copy_sample, node, status


def test_reads_from_many_threads(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    errors: list[object] = []
    with Vine(root, writable=False) as vine:
        calls = [
            lambda: vine.locate("exchange policy", k=3),
            lambda: vine.look("sales/exchange-policy"),
            lambda: vine.sniff(["NF-4412", "exchange"]),
            lambda: vine.scan("_index", recursive=True, fields=["id"]),
            lambda: vine.query("sales/orders-2026", "SELECT COUNT(*) FROM orders"),
            lambda: vine.pick("sales/exchange-policy", section="Deadlines"),
            lambda: vine.move("sales/_index", rel="children"),
        ]

        def worker(offset: int) -> None:
            for i in range(40):
                out = calls[(i + offset) % len(calls)]()
                if "error" in out:
                    errors.append(out)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_writes_from_many_threads_serialize(tmp_path: Path) -> None:
    with Vine.init(tmp_path / "f", "Threads") as vine:
        results: list[dict] = []

        def worker(n: int) -> None:
            for i in range(5):
                results.append(
                    vine.plant(node(f"t{n}-{i}", "_index", f"T {n} {i}", "Planted from a thread."))
                )

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all("error" not in r for r in results), results
        assert len({r["commit"] for r in results}) == 15
        assert vine.scan("_index", fields=["id"], after="")["total"] == 15
        assert status(vine.root) == ""
