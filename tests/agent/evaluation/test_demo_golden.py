"""The demo golden set is well formed and every gold query runs and passes the bot's gate."""

from __future__ import annotations

from collections import Counter

import pytest

from agent.catalog.snapshot import Catalog
from agent.evaluation.golden import GoldenSet
from agent.gate import check_sql
from connectors.duckdb.connector import DuckDBConnector

CATEGORIES = {
    "lookup",
    "join",
    "aggregation",
    "date",
    "ratio",
    "top_n",
    "follow_up",
    "ambiguous",
    "unanswerable",
}


def test_the_set_covers_every_category(demo_golden: GoldenSet) -> None:
    counts = Counter(q.category for q in demo_golden.questions)
    assert len(demo_golden.questions) >= 80
    assert set(counts) == CATEGORIES
    assert min(counts.values()) >= 5
    assert {q.expect for q in demo_golden.questions if q.category == "ambiguous"} == {"clarify"}
    assert {q.expect for q in demo_golden.questions if q.category == "unanswerable"} == {"decline"}
    assert sum(1 for q in demo_golden.questions if q.follow_up_of) >= 5


@pytest.mark.slow
def test_every_gold_query_runs_and_passes_the_gate(
    demo_golden: GoldenSet, demo: DuckDBConnector
) -> None:
    schema = Catalog(demo).gate_schema
    empty = []
    for q in demo_golden.questions:
        for sql in q.gold:
            verdict = check_sql(sql, schema, row_limit=1000)
            assert verdict.ok, (q.id, verdict.reasons)
            result = demo.run(sql, max_rows=1000, timeout_s=30)
            assert result.columns, q.id
            if not result.rows or result.rows == [(None,)]:
                empty.append(q.id)
    # Only questions about periods relative to today may come back empty (on a later day).
    assert set(empty) <= {"date-03", "date-04", "date-11"}, empty
