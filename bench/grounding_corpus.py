"""Gold queries with deliberately corrupted literals: does value grounding catch them?

Each sql-eval gold query goes through the real gate against its database's DuckDB file. Every text
literal it filters on that really occurs is corrupted twice: a case change (`'Boston'` ->
`'boston'`) and a misspelling (two neighbouring letters swapped, or one dropped). A case counts
as caught when grounding reports the corrupted literal, and as right-first when the original is
the first suggestion.
"""

from __future__ import annotations

import statistics
import time

import sqlglot
from sqlglot import exp

from agent.catalog.grounding import check_values, text_filters
from agent.catalog.snapshot import CatalogSnapshot
from agent.gate import check_sql
from bench.warehouse import RealTables, gold_questions
from connectors.duckdb.connector import DuckDBConnector


def case_change(value: str) -> str:
    changed = value.lower()
    if changed == value:
        changed = value.upper() if value.upper() != value else value.title()
    return changed


def misspell(value: str) -> str:
    """Swap the two letters after the first (or drop one when they are equal)."""
    if len(value) < 4:
        return value + value[-1]
    i = len(value) // 2
    if value[i] != value[i + 1]:
        return value[:i] + value[i + 1] + value[i] + value[i + 2 :]
    return value[:i] + value[i + 1 :]


def measure(real: RealTables) -> dict[str, float]:
    cases = caught = first = 0
    elapsed: list[float] = []
    missed: list[str] = []
    for database, path in real.files.items():
        tables = tuple(t for t in real.tables if t.name.lower().startswith(f"{database}."))
        profiles = {k: p for k, p in real.profiles.items() if k.startswith(f"{database}.")}
        snapshot = CatalogSnapshot(tables, "duckdb", profiles)
        connector = DuckDBConnector(path)
        try:
            for gold in (g for g in gold_questions() if g.database == database):
                verdict = check_sql(gold.queries[0], snapshot.gate_schema, row_limit=1000)
                if not verdict.ok or check_values(verdict.sql, snapshot, connector):
                    continue  # only gold queries whose literals all occur
                tree = sqlglot.parse_one(verdict.sql, read="duckdb")
                filters = text_filters(verdict.sql, snapshot)
                for value in sorted({f.value for f in filters if not f.folded}):
                    for corrupt in {case_change(value), misspell(value)} - {value}:
                        bad = _replace(tree, value, corrupt)
                        start = time.perf_counter()
                        misses = check_values(bad, snapshot, connector)
                        elapsed.append((time.perf_counter() - start) * 1000)
                        hit = next((m for m in misses if m.value == corrupt), None)
                        cases += 1
                        if hit is None:
                            missed.append(f"{corrupt!r} (for {value!r}) not reported")
                            continue
                        caught += 1
                        if hit.suggestions[:1] == (value,):
                            first += 1
                        else:
                            missed.append(str(hit))
        finally:
            connector.close()
    for line in missed[:5]:
        print("  grounding:", line)
    return {
        "corrupted_literals": cases,
        "caught": caught,
        "right_value_first": first,
        "caught_rate": caught / cases if cases else 0.0,
        "right_first_rate": first / cases if cases else 0.0,
        "median_check_ms": statistics.median(elapsed) if elapsed else 0.0,
    }


def _replace(tree: exp.Expression, old: str, new: str) -> str:
    copy = tree.copy()
    for literal in copy.find_all(exp.Literal):
        if literal.is_string and literal.this == old:
            literal.replace(exp.Literal.string(new))
    return copy.sql("duckdb")
