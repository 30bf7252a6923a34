"""Retrieval quality of ``locate`` and ``harvest`` on a question set, and their latency.

Run from the repository root::

    python -m bench.quality                       # bench/questions.json over sample-brain/,
                                                  # then the held-out bench/holdout.json
    python -m bench.quality --k 3 --rounds 5 --json
    python -m bench.quality --nodes 10000         # adds latency on the synthetic 10k forest
    python -m bench.quality --latency-forest path/to/forest --skip-quality
    python -m bench.quality --ablation            # the scorecard with each ranking part off

For each question both rankers run through ``Vine.call`` (the boundary every surface
uses), and each answers with its top ``k`` ids. The figures per ranker: recall@k of the
expected ids (averaged over questions) and the share of questions fully answered,
tokens per response (``monkeyllm.budget.cost``), latency median and p95, and the same
recall broken down by language and by kind tag; then every question a ranker missed,
with the ids it returned instead.

The recall target applies to ``questions.json``. ``holdout.json`` was written later by
someone who read only the forest's files and never ran a ranker: a change tuned to the
first set's misses shows up there as a loss, or as no gain.

Reads deposit heat, and heat moves later rankings. The quality figures are therefore
taken on a scratch copy of the forest (the original keeps its heat) opened with
``alpha=0``, so no ranking depends on the questions asked before it; the rounds after
the first must return the same ids, and a question whose ids move is flagged.

A ranker the engine does not serve yet (``harvest`` before it lands) is reported as
unavailable, with the engine's error, rather than failing the run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.run import Workload, ensure_forest, summary, timed
from monkeyllm import Vine
from monkeyllm.budget import cost

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-brain"
QUESTIONS = Path(__file__).resolve().parent / "questions.json"
# Written afterwards, by someone who never ran the rankers, to catch tuning to QUESTIONS.
HOLDOUT = Path(__file__).resolve().parent / "holdout.json"
RANKERS = ("locate", "harvest")
ALPHA = 0.0
HEAT_NOTE = "off: alpha=0, on a scratch copy of the forest"
# harvest on the 10k forest, median of its first call (the target; upstream 5.9 s).
LATENCY_TARGET_MS = 60.0
RECALL_TARGET = 0.9


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    """The question set: a JSON list of ``{id, lang, question, expected, kind, note}``."""
    return json.loads(path.read_text(encoding="utf-8"))


def scratch_copy(forest: Path, dest: Path) -> Path:
    """A copy of ``forest`` at ``dest`` without its derived state (catalog, heat, traces)
    or lock, so measuring never deposits heat in the original."""
    shutil.copytree(forest, dest, ignore=shutil.ignore_patterns("_derived", ".vine.lock", ".git"))
    return dest


def ask(vine: Vine, ranker: str, question: str, k: int) -> dict[str, Any]:
    """One ranker's response to one question, through the call boundary."""
    return vine.call(ranker, {"query": question, "k": k})


def result_ids(response: dict[str, Any]) -> list[str]:
    """The ids of a response's results, in rank order."""
    return [r["id"] for r in response.get("results", [])]


def error_text(response: dict[str, Any]) -> str | None:
    """``CODE: message`` of an error envelope, else None."""
    if "error" not in response:
        return None
    err = response["error"]
    return f"{err.get('code')}: {err.get('message')}"


def availability(vine: Vine, rankers: Iterable[str], probe: str, k: int) -> dict[str, str]:
    """The rankers that answer an error to a plain question, with that error."""
    out = {}
    for ranker in rankers:
        error = error_text(ask(vine, ranker, probe, k))
        if error is not None:
            out[ranker] = error
    return out


def run_question(vine: Vine, ranker: str, q: dict[str, Any], k: int, rounds: int) -> dict[str, Any]:
    """``rounds`` timed calls for one question; ids and tokens of the first."""
    samples: list[float] = []
    first: dict[str, Any] | None = None
    stable = True
    for _ in range(rounds):
        ms, response = timed(lambda: ask(vine, ranker, q["question"], k))
        samples.append(ms)
        if first is None:
            first = response
        elif result_ids(response) != result_ids(first):
            stable = False
    assert first is not None
    ids = result_ids(first)[:k]
    hits = [e for e in q["expected"] if e in ids]
    row: dict[str, Any] = {
        "ids": ids,
        "hits": hits,
        "missing": [e for e in q["expected"] if e not in ids],
        "recall": len(hits) / len(q["expected"]),
        "tokens": cost(first),
        "ms": samples,
        "stable": stable,
    }
    if "found_by" in (first.get("results") or [{}])[0]:
        row["found_by"] = {r["id"]: r.get("found_by") for r in first["results"]}
    error = error_text(first)
    if error is not None:
        row["error"] = error
    return row


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """recall@k and the share fully answered over a list of per-question rows."""
    if not rows:
        return {"n": 0, "recall": None, "answered": None}
    recall = sum(r["recall"] for r in rows) / len(rows)
    answered = sum(1 for r in rows if r["recall"] == 1.0)
    return {
        "n": len(rows),
        "recall": round(recall, 3),
        "answered": round(answered / len(rows), 3),
        "answered_count": answered,
    }


def ranker_figures(questions: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure of one ranker, from its per-question rows (aligned with questions)."""
    tokens = [r["tokens"] for r in rows]
    samples = [ms for r in rows for ms in r["ms"]]
    langs = sorted({q["lang"] for q in questions})
    kinds = sorted({t for q in questions for t in q["kind"]})
    pairs = list(zip(questions, rows, strict=True))
    return {
        "available": True,
        **aggregate(rows),
        "tokens": {
            "mean": round(statistics.mean(tokens), 1),
            "median": statistics.median(tokens),
            "max": max(tokens),
        },
        "latency_ms": summary(samples),
        "by_lang": {lang: aggregate([r for q, r in pairs if q["lang"] == lang]) for lang in langs},
        "by_kind": {kind: aggregate([r for q, r in pairs if kind in q["kind"]]) for kind in kinds},
        "unstable": [q["id"] for q, r in pairs if not r["stable"]],
        "errors": {q["id"]: r["error"] for q, r in pairs if "error" in r},
    }


def measure(
    forest: Path = SAMPLE,
    questions: list[dict[str, Any]] | None = None,
    k: int = 3,
    rounds: int = 5,
    rankers: Iterable[str] = RANKERS,
    *,
    name: str = "questions",
    target: bool = True,
) -> dict[str, Any]:
    """Quality figures of each ranker on ``questions`` over a scratch copy of ``forest``;
    ``target`` says whether the recall target applies to this set."""
    questions = load_questions() if questions is None else questions
    rankers = list(rankers)
    figures: dict[str, Any] = {
        "forest": str(forest),
        "set": name,
        "questions": len(questions),
        "k": k,
        "target": target,
        "rounds": rounds,
        "alpha": ALPHA,
        "heat": HEAT_NOTE,
        "rankers": {},
        "answers": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
        root = scratch_copy(forest, Path(tmp) / "forest")
        with Vine(root, writable=False, alpha=ALPHA) as vine:
            # The catalog build, the freshness walks and first-use caches stay off the clock.
            for _ in range(2):
                vine.call("look", {"id": "_index"})
            missing = availability(vine, rankers, "warm up the caches", k)
            live = [r for r in rankers if r not in missing]
            per: dict[str, list[dict[str, Any]]] = {
                r: [run_question(vine, r, q, k, rounds) for q in questions] for r in live
            }
    for ranker in rankers:
        if ranker in missing:
            figures["rankers"][ranker] = {"available": False, "reason": missing[ranker]}
        else:
            figures["rankers"][ranker] = ranker_figures(questions, per[ranker])
    for i, q in enumerate(questions):
        answer = {key: q[key] for key in ("id", "lang", "kind", "question", "expected")}
        for ranker in live:
            row = dict(per[ranker][i])
            row["median_ms"] = round(statistics.median(row.pop("ms")), 3)
            answer[ranker] = row
        figures["answers"].append(answer)
    figures["misses"] = {
        r: [a["id"] for a in figures["answers"] if a[r]["recall"] < 1.0] for r in live
    }
    return figures


# -- latency on a synthetic forest -------------------------------------------------------


def synthetic_questions(vine: Vine, seed: int, n: int) -> list[dict[str, Any]]:
    """Questions drawn from the forest's own leaves: title words plus one body word.

    Each comes in two styles, keywords (``warranty ledger margin``) and the question an
    agent would type (``what does the warranty ledger say about margin?``); the leaf it
    was drawn from is its expected answer.
    """
    work = Workload(vine, seed)
    rng = work.rng
    out: list[dict[str, Any]] = []
    for node_id in rng.sample(work.small, min(len(work.small), 3 * n)):
        title = vine.look(node_id, fields=["title"]).get("title") or ""
        words = [w.strip(".,;:()\"'") for w in title.split()]
        words = [w for w in words if len(w) > 3][:2]
        body = vine.pick(node_id).get("body") or ""
        pool = sorted({w.strip(".,;:()[]\"'*`") for w in body.split()})
        pool = [
            w
            for w in pool
            if len(w) >= 6 and w.isalpha() and w.lower() not in {x.lower() for x in words}
        ]
        if not words or not pool:
            continue
        term = rng.choice(pool)
        out.append(
            {
                "source": node_id,
                "keywords": " ".join([*words, term]),
                "question": f"what does the {' '.join(words).lower()} say about {term}?",
            }
        )
        if len(out) == n:
            break
    return out


def latency(
    root: Path,
    *,
    queries: int = 20,
    k: int = 3,
    seed: int = 7,
    rounds: int = 3,
    rankers: Iterable[str] = RANKERS,
) -> dict[str, Any]:
    """Latency of each ranker on ``root``: the first call of a fresh ``Vine`` (the freshness
    walk included), its first call once cheap calls have paid for the walks (what the
    ranker itself costs on first use), and warm (one open ``Vine``, every question
    ``rounds`` times after one warm-up call).

    The forest is read in place: heat is deposited in its ``_derived/``, with ``alpha=0``
    so no ranking depends on it.

    Also the share of questions whose source leaf is in the top ``k`` (a sanity check
    of the synthetic questions, not a quality figure: the generator's prose is random).
    """
    with Vine(root, writable=False, alpha=ALPHA) as vine:
        qs = synthetic_questions(vine, seed, queries)
        missing = availability(vine, rankers, qs[0]["keywords"], k)
    out: dict[str, Any] = {
        "forest": str(root),
        "queries": len(qs),
        "k": k,
        "rounds": rounds,
        "alpha": ALPHA,
        "examples": [q["question"] for q in qs[:3]],
        "rankers": {},
    }
    for ranker in rankers:
        if ranker in missing:
            out["rankers"][ranker] = {"available": False, "reason": missing[ranker]}
            continue
        out["rankers"][ranker] = {
            style: _latency_style(root, ranker, qs, style, k, rounds)
            for style in ("keywords", "question")
        }
    return out


def _latency_style(
    root: Path, ranker: str, qs: list[dict[str, Any]], style: str, k: int, rounds: int
) -> dict[str, Any]:
    fresh, synced, warm, tokens, found = [], [], [], [], 0
    for q in qs:
        with Vine(root, writable=False, alpha=ALPHA) as vine:
            ms, response = timed(lambda v=vine, q=q: ask(v, ranker, q[style], k))
            fresh.append(ms)
        with Vine(root, writable=False, alpha=ALPHA) as vine:
            # The first two calls of a process walk the forest (the second starts inotify).
            for _ in range(2):
                vine.call("look", {"id": "_index"})
            ms, _ = timed(lambda v=vine, q=q: ask(v, ranker, q[style], k))
            synced.append(ms)
        tokens.append(cost(response))
        found += q["source"] in result_ids(response)[:k]
    with Vine(root, writable=False, alpha=ALPHA) as vine:
        ask(vine, ranker, qs[0][style], k)
        for _ in range(rounds):
            for q in qs:
                warm.append(timed(lambda v=vine, q=q: ask(v, ranker, q[style], k))[0])
    return {
        "first call, fresh Vine": summary(fresh),
        "first call, after the walks": summary(synced),
        "warm": summary(warm),
        "tokens median": statistics.median(tokens),
        "source in top k": round(found / len(qs), 3),
    }


# -- rendering ---------------------------------------------------------------------------


def _fmt(agg: dict[str, Any]) -> str:
    if not agg or agg.get("recall") is None:
        return "-"
    return f"{agg['recall']:.2f} ({agg['answered_count']}/{agg['n']})"


def render_quality(figures: dict[str, Any]) -> list[str]:
    """The quality figures as table lines."""
    k = figures["k"]
    lines = [
        f"quality on {figures['forest']}: {figures['questions']} questions "
        f"({figures.get('set', 'questions')}), k={k}, "
        f"{figures['rounds']} rounds each; heat {figures['heat']}",
        "",
    ]
    lines.append(
        f"{'ranker':9} {'recall@' + str(k):>9} {'answered':>9} "
        f"{'tokens mean/median/max':>24} {'ms median':>10} {'ms p95':>8}"
    )
    live = []
    for name, r in figures["rankers"].items():
        if not r["available"]:
            lines.append(f"{name:9} unavailable ({r['reason']})")
            continue
        live.append(name)
        t, lat = r["tokens"], r["latency_ms"]
        lines.append(
            f"{name:9} {r['recall']:>9.3f} {r['answered']:>9.3f} "
            f"{t['mean']:>10.0f} / {t['median']:>4.0f} / {t['max']:>4} "
            f"{lat['median']:>10.2f} {lat['p95']:>8.2f}"
        )
    if "harvest" in live and figures.get("target", True):
        ok = figures["rankers"]["harvest"]["recall"] >= RECALL_TARGET
        lines.append(
            f"target: harvest recall@{k} >= {RECALL_TARGET} ({'met' if ok else 'NOT met'})"
        )
    if not live:
        return lines
    lines.append("")
    lines.append(
        f"recall@{k} (fully answered/n) by{'':18}" + "".join(f"{name:>18}" for name in live)
    )
    for group in ("by_lang", "by_kind"):
        first = figures["rankers"][live[0]][group]
        lines.append(f"  {group[3:]}")
        for key in first:
            lines.append(
                f"    {key:32}"
                + "".join(
                    f"{_fmt(figures['rankers'][name][group].get(key, {})):>18}" for name in live
                )
            )
    for name in live:
        r = figures["rankers"][name]
        if r["unstable"]:
            lines.append(f"{name}: ids moved between rounds for {', '.join(r['unstable'])}")
        for qid, err in r["errors"].items():
            lines.append(f"{name}: {qid} answered {err}")
    lines.extend(render_misses(figures, live))
    return lines


def render_misses(figures: dict[str, Any], live: list[str]) -> list[str]:
    """Every question a ranker missed, with what it returned instead."""
    lines: list[str] = []
    for name in live:
        missed = [a for a in figures["answers"] if a[name]["recall"] < 1.0]
        lines.append("")
        lines.append(f"missed by {name} ({len(missed)} of {figures['questions']}):")
        for a in missed:
            row = a[name]
            lines.append(
                f"  {a['id']} [{a['lang']}, {', '.join(a['kind'])}] "
                f"recall {row['recall']:.2f}: {a['question']}"
            )
            lines.append(f"      missing:  {', '.join(row['missing'])}")
            found_by = row.get("found_by", {})
            returned = [
                i + (f" ({'+'.join(found_by[i])})" if found_by.get(i) else "") for i in row["ids"]
            ]
            lines.append(f"      returned: {', '.join(returned) or '(nothing)'}")
    return lines


def render_latency(lat: dict[str, Any]) -> list[str]:
    """The synthetic-forest latency figures as table lines."""
    lines = [
        f"latency on {lat['forest']}: {lat['queries']} questions drawn from its leaves, "
        f"k={lat['k']}, warm x{lat['rounds']}; e.g. {lat['examples'][0]!r}",
        "",
    ]
    lines.append(f"{'ranker, style, phase':52} {'median':>9} {'p95':>9}")
    for name, r in lat["rankers"].items():
        if not r.get("available", True):
            lines.append(f"{name:52} unavailable ({r['reason']})")
            continue
        for style, s in r.items():
            for phase in ("first call, fresh Vine", "first call, after the walks", "warm"):
                target = (
                    f"   <= {LATENCY_TARGET_MS:g} [5900]"
                    if name == "harvest" and phase.startswith("first")
                    else ""
                )
                lines.append(
                    f"{f'{name}, {style}, {phase} (ms)':52} "
                    f"{s[phase]['median']:>9.2f} {s[phase]['p95']:>9.2f}{target}"
                )
            lines.append(
                f"{f'{name}, {style}: tokens median, source in top k':52} "
                f"{s['tokens median']:>9} {s['source in top k']:>9.2f}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.quality``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--forest",
        type=Path,
        default=SAMPLE,
        help="the forest the questions are about (default sample-brain)",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=QUESTIONS,
        help="the question set (default bench/questions.json, followed by "
        "the held-out bench/holdout.json)",
    )
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="timed calls per question")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--nodes",
        type=int,
        help="also time the rankers on the synthetic "
        "forest of this many nodes (generated once, as bench.run does)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--latency-forest", type=Path, help="also time the rankers here")
    parser.add_argument("--queries", type=int, default=20, help="questions for the latency figures")
    parser.add_argument("--skip-quality", action="store_true", help="only the latency figures")
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="the scorecard of every set with each part of the ranking off",
    )
    parser.add_argument(
        "--no-scorecard",
        action="store_true",
        help="leave out the per-set scorecard (bench.scorecard)",
    )
    args = parser.parse_args(argv)
    out: dict[str, Any] = {}
    if not args.skip_quality:
        default = args.questions.resolve() == QUESTIONS
        out["quality"] = measure(
            args.forest.resolve(),
            load_questions(args.questions),
            k=args.k,
            rounds=args.rounds,
            name=args.questions.name,
            target=default,
        )
        if default and HOLDOUT.exists():
            out["holdout"] = measure(
                args.forest.resolve(),
                load_questions(HOLDOUT),
                k=args.k,
                rounds=args.rounds,
                name=HOLDOUT.name,
                target=False,
            )
    if not args.skip_quality and not args.no_scorecard:
        from bench.scorecard import SETS, scorecard

        out["scorecard"] = scorecard(
            [name for name, path in SETS.items() if path.exists()], ablation=args.ablation
        )
    target = (
        args.latency_forest.resolve()
        if args.latency_forest
        else (ensure_forest(args.nodes, args.seed) if args.nodes else None)
    )
    if target is not None:
        out["latency"] = latency(target, queries=args.queries, k=args.k, seed=args.seed)
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    lines: list[str] = []
    if "quality" in out:
        lines.extend(render_quality(out["quality"]))
    if "holdout" in out:
        lines.extend(["", *render_quality(out["holdout"])])
    if "scorecard" in out:
        from bench.scorecard import render

        lines.extend(
            ["", "scorecard, every set (python -m bench.scorecard):", "", *render(out["scorecard"])]
        )
    if "latency" in out:
        lines.extend(
            ["", *render_latency(out["latency"])] if lines else render_latency(out["latency"])
        )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
