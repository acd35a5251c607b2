"""The repair benchmark's mistakes and its judge, on the demo warehouse."""

from __future__ import annotations

import pytest
import sqlglot

from agent.catalog.profiling import ProfileLimits, profile_tables
from agent.catalog.snapshot import CatalogSnapshot
from agent.evaluation.compare import Table
from bench.repair_report import MUTATIONS, judge
from connectors.duckdb.connector import DuckDBConnector

SQL = (
    "SELECT r.region_name, c.segment, count(*) AS customers FROM customers AS c "
    "JOIN regions AS r ON r.region_id = c.region_id WHERE c.segment = 'business' "
    "GROUP BY r.region_name, c.segment"
)
EXPECTED = {
    "wrong case in a literal": "pinpointed by grounding",
    "misspelt column": "pinpointed by gate",
    "missing GROUP BY column": "pinpointed by engine",
    "wrong dialect function": None,  # no function to swap in this query
    "markdown fences": "fixed",
    "trailing semicolon": "fixed",
    "missing table qualifier": "pinpointed by gate",
}


@pytest.mark.slow
def test_each_mistake_is_judged_by_the_step_that_catches_it(demo: DuckDBConnector) -> None:
    tables = tuple(demo.list_tables())
    snapshot = CatalogSnapshot(tables, "duckdb", profile_tables(demo, tables, ProfileLimits()))
    result = demo.run(SQL, max_rows=1000, timeout_s=30)
    gold = Table(tuple(result.columns), tuple(result.rows))
    outcomes = {}
    for name, mutate in MUTATIONS.items():
        mistake = mutate(sqlglot.parse_one(SQL, read="duckdb"), SQL)
        outcomes[name] = mistake and judge(mistake, gold, snapshot, demo)
    assert outcomes == EXPECTED
