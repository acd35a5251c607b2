"""defog's sql-eval set on the defog-data databases in DuckDB: a model replaying the gold SQL
(PostgreSQL, transpiled) scores 100% wherever the gold SQL itself runs on DuckDB."""

from __future__ import annotations

from pathlib import Path

from agent.evaluation import defog
from agent.evaluation.report import build_report
from agent.evaluation.runner import evaluation_agent, run_golden
from connectors.duckdb import DuckDBConnector
from tests.eval.conftest import OracleModel

#: Gold queries DuckDB cannot run after transpiling (PostgreSQL-only formats and grouping).
GOLD_ERRORS = {"atis-059", "broker-194", "yelp-161", "yelp-175"}


def test_the_sql_eval_set_runs_on_every_defog_database(tmp_path: Path) -> None:
    sets = defog.golden_sets()
    assert set(sets) == set(defog.databases()) and len(sets) == 11
    results = []
    for database, golden in sets.items():
        connector = DuckDBConnector(defog.build_defog(database, tmp_path / f"{database}.duckdb"))
        model = OracleModel.for_set(golden, "duckdb")
        try:
            agent = evaluation_agent(connector, model)
            results += run_golden(golden, agent, database=database)
        finally:
            connector.close()
    report = build_report(results, {})
    assert {f["id"] for f in report["failures"]} == GOLD_ERRORS
    assert report["summary"]["gold_errors"] == len(GOLD_ERRORS)
    assert report["summary"]["accuracy"] == 1.0
    assert report["summary"]["questions"] == len(defog.gold_questions()) + len(
        defog.idk_questions()
    ) - len(GOLD_ERRORS)
    assert report["summary"]["rightly_declined"] == len(defog.idk_questions())
