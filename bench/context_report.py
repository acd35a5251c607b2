"""Context benchmark: retrieval recall and prompt size on a 2,000-table catalog, value grounding
on corrupted gold literals, and context-building time with a warm cache.

    uv run python -m bench.context_report [--tables 2000] [--cache .cache/bench]

The defog-data databases and the demo are real DuckDB files, read and profiled by the real
connector; the rest of the 2,000 tables are generated (bench.synthetic).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from agent.catalog.snapshot import CatalogSnapshot
from agent.model.question_context import ContextBuilder
from bench import grounding_corpus, synthetic
from bench.warehouse import gold_questions, idk_questions, real_tables


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def retrieval(snapshot: CatalogSnapshot, builder: ContextBuilder) -> dict[str, float]:
    golds = gold_questions()
    hits, tokens, misses = 0, [], []
    for gold in golds:
        context = builder.build(gold.question, snapshot)
        shown = {name.lower() for name in context.tables}
        if any(needed <= shown for needed in gold.table_sets()):
            hits += 1
        else:
            misses.append(gold)
        tokens.append(context.tokens)
    for gold in misses[:10]:
        print(f"  miss [{gold.database}] {gold.question[:90]} needs {gold.table_sets()[:1]}")
    return {
        "questions": len(golds),
        "recall": hits / len(golds),
        "median_tokens": statistics.median(tokens),
        "p90_tokens": percentile(tokens, 0.9),
        "max_tokens": max(tokens),
        "full_schema_tokens": builder.full_schema_tokens(snapshot),
    }


def idk_matches(snapshot: CatalogSnapshot, builder: ContextBuilder) -> dict[str, float]:
    """How many idk questions find no table at all (the model is then told nothing matched)."""
    questions = idk_questions()
    empty = sum(1 for _, q in questions if not builder.build(q, snapshot).tables)
    return {"idk_questions": len(questions), "idk_no_table": empty}


def timing(snapshot: CatalogSnapshot, builder: ContextBuilder) -> dict[str, float]:
    golds = gold_questions()
    builder.build(golds[0].question, snapshot)  # warm: index built once per snapshot
    elapsed = []
    for gold in golds:
        start = time.perf_counter()
        builder.build(gold.question, snapshot)
        elapsed.append((time.perf_counter() - start) * 1000)
    return {"median_ms": statistics.median(elapsed), "p90_ms": percentile(elapsed, 0.9)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--cache", type=Path, default=Path(".cache/bench"))
    args = parser.parse_args()

    start = time.perf_counter()
    real = real_tables(args.cache)
    fake, fake_profiles = synthetic.generate(args.tables - len(real.tables))
    tables = [*real.tables, *fake]
    random.Random(7).shuffle(tables)
    snapshot = CatalogSnapshot(tuple(tables), "duckdb", {**fake_profiles, **real.profiles})
    print(
        f"catalog: {len(tables)} tables ({len(real.tables)} real) in "
        f"{time.perf_counter() - start:.1f} s"
    )
    builder = ContextBuilder()
    start = time.perf_counter()
    builder.warm(snapshot)
    print(f"index build: {(time.perf_counter() - start) * 1000:.0f} ms")
    for name, result in (
        ("retrieval", retrieval(snapshot, builder)),
        ("idk", idk_matches(snapshot, builder)),
        ("timing", timing(snapshot, builder)),
        ("grounding", grounding_corpus.measure(real)),
    ):
        print(name, {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()})


if __name__ == "__main__":
    main()
