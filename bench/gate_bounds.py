"""Gate CPU on the flat chains of issue 15 item 8, and on the largest chains the bounds accept.

    uv run python -m bench.gate_bounds

Called by the gate report for the `## SQL gate` section of BENCHMARKS.md. Without the
bounds, sqlglot's scope walk made these quadratic (5,000 ORs: 15 s of CPU); now a chain over
`agent.gate.bounds.MAX_CHAIN` terms is refused right after parsing.
"""

from __future__ import annotations

import time

from agent.gate import bounds, check_sql
from tests.support import canary


def statements() -> list[tuple[str, str]]:
    """(label, SQL): the issue's two chains, then each kind of chain at the bound."""
    at = bounds.MAX_CHAIN
    return [
        ("issue: 5,000-term OR", _or(5_000)),
        ("issue: 10,000 `+` terms", _plus(10_000)),
        (f"{at}-term OR (the bound)", _or(at)),
        (f"{at} `+` terms (the bound)", _plus(at)),
        (f"{at} UNION ALL branches (the bound)", _union(at)),
    ]


def report() -> None:
    print("**Gate CPU on flat chains** (one core, `time.process_time`, DuckDB canary schema):\n")
    print("| statement | bytes | gate CPU | verdict |")
    print("|---|---:|---:|---|")
    schema = canary.schema("duckdb")
    for label, sql in statements():
        start = time.process_time()
        verdict = check_sql(sql, schema)
        seconds = time.process_time() - start
        outcome = "accepted" if verdict.ok else ", ".join(r.code for r in verdict.reasons)
        print(f"| {label} | {len(sql.encode()):,} | {seconds:.2f} s | {outcome} |")
    print()


def _or(terms: int) -> str:
    return "SELECT id FROM customers WHERE " + " OR ".join(f"id = {i}" for i in range(terms))


def _plus(terms: int) -> str:
    return "SELECT " + " + ".join(["id"] * terms) + " FROM customers"


def _union(terms: int) -> str:
    return " UNION ALL ".join(["SELECT id FROM orders"] * terms)


if __name__ == "__main__":
    report()
