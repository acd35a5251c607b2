"""defog's sql-eval set on the defog-data databases in DuckDB: a model replaying the gold SQL
(PostgreSQL, transpiled) scores 100% wherever the gold SQL itself runs on DuckDB."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agent.evaluation import defog
from agent.evaluation.report import build_report
from agent.evaluation.runner import evaluation_agent, run_golden
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.evaluation.conftest import OracleModel

#: Gold queries DuckDB cannot run after transpiling (PostgreSQL-only formats and grouping).
GOLD_ERRORS = {"atis-059", "broker-194", "yelp-161", "yelp-175"}


@pytest.mark.slow
def test_the_sql_eval_set_runs_on_every_defog_database(defog_duckdb: Path) -> None:
    sets = defog.golden_sets()
    assert set(sets) == set(defog.databases()) and len(sets) == 11
    results = []
    for database, golden in sets.items():
        connector = DuckDBConnector(defog_duckdb / f"{database}.duckdb")
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


def test_the_stratified_sample_is_fixed_and_even() -> None:
    sets = defog.golden_sets(defog.CORPORA)
    first = defog.stratified_sample(sets, 15)
    picked = [q for golden in first.values() for q in golden.questions]
    by_category = Counter(q.category for q in picked)
    assert set(by_category.values()) == {15} and "unanswerable" in by_category
    again = defog.stratified_sample(defog.golden_sets(defog.CORPORA), 15)
    assert [q.id for g in again.values() for q in g.questions] == [q.id for q in picked]


def test_instruct_questions_carry_their_instructions_as_sql_eval_asks_them() -> None:
    questions = [q for g in defog.golden_sets(defog.CORPORA).values() for q in g.questions]
    instruct = [q for q in questions if q.category == "instruct"]
    assert len(instruct) == 35
    assert all("\n" in q.question for q in instruct)
    assert all("\n" not in q.question for q in questions if q.category != "instruct")
