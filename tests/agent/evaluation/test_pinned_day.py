"""A golden set that pins its day (`today:`) scores the same on any date: the model is told the
day, gold and generated SQL read it where they read the clock, the demo is built for it, and a
question whose gold answer is empty is flagged."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from agent.context import AgentLimits
from agent.evaluation.baseline import NaiveBaseline
from agent.evaluation.golden import GoldenError, GoldenSet, dump_golden, load_golden
from agent.evaluation.runner import EMPTY_GOLD, empty_gold, evaluation_agent, gold_sql, run_golden
from agent.model.providers import ScriptedChatModel
from agent.reference_day import pin_sql
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.evaluation.conftest import DEMO_GOLDEN

PIN = dt.date(2026, 11, 1)
LAST_MONTH = (
    "SELECT count(*) AS orders FROM orders"
    " WHERE order_date >= date_trunc('month', current_date) - INTERVAL 1 MONTH"
    " AND order_date < date_trunc('month', current_date)"
)


def reads_clock(sql: str) -> bool:
    tree = sqlglot.parse_one(sql, read="duckdb")
    return any(tree.find_all(exp.CurrentDate, exp.CurrentTimestamp))


def test_the_demo_set_pins_its_day_and_its_gold_sql_reads_it() -> None:
    golden = load_golden(DEMO_GOLDEN)
    assert golden.today == PIN
    relative = [q for q in golden.questions if any(reads_clock(g) for g in q.gold)]
    assert len(relative) == 3
    for q in relative:
        for sql in gold_sql(golden, q, "duckdb"):
            assert not reads_clock(sql) and "'2026-11-01'" in sql


def test_the_clock_is_replaced_on_the_tree_not_in_the_text() -> None:
    pinned = pin_sql(
        "SELECT 'current_date' AS label, now() AS moment, today() AS d FROM orders"
        " WHERE order_date < current_date",
        PIN,
        "duckdb",
    )
    assert pinned == (
        "SELECT 'current_date' AS label, CAST('2026-11-01 00:00:00' AS TIMESTAMP) AS moment,"
        " CAST('2026-11-01' AS DATE) AS d FROM orders WHERE order_date < CAST('2026-11-01' AS DATE)"
    )
    assert pin_sql("SELECT 1", PIN, "duckdb") == "SELECT 1"
    assert pin_sql("SELECT CURRENT_DATE()", PIN, "bigquery") == "SELECT CAST('2026-11-01' AS DATE)"


def test_today_is_read_and_written_and_a_bad_one_named(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(
        "today: '2026-05-04'\nquestions:\n- {id: a, category: c, question: q, gold: SELECT 1}\n"
    )
    golden = load_golden(path)
    assert golden.today == dt.date(2026, 5, 4) and "today" not in golden.meta
    dump_golden(golden, tmp_path / "again.yaml")
    assert load_golden(tmp_path / "again.yaml").today == dt.date(2026, 5, 4)
    path.write_text("today: next week\nquestions: []\n")
    with pytest.raises(GoldenError, match="today must be a date written YYYY-MM-DD"):
        load_golden(path)


def test_no_gold_answer_of_the_demo_set_is_empty_under_its_pin(
    demo_golden: GoldenSet, demo: DuckDBConnector
) -> None:
    assert empty_gold(demo_golden, demo, AgentLimits()) == []


def test_a_gold_answer_past_the_datas_end_is_flagged(
    demo_golden: GoldenSet, demo: DuckDBConnector
) -> None:
    """Asked in mid-2027 of a demo ending 2026-10-31, "last month" and "this year" are empty."""
    later = dataclasses.replace(demo_golden, today=dt.date(2027, 6, 1))
    assert set(empty_gold(later, demo, AgentLimits())) == {"date-03", "date-04", "date-11"}


def test_the_agent_is_told_the_pinned_day_and_its_sql_reads_it(demo: DuckDBConnector) -> None:
    golden = load_golden(DEMO_GOLDEN)
    (question,) = [q for q in golden.questions if q.id == "date-04"]
    one = GoldenSet((question,), warehouse="demo", today=PIN)
    reply = json.dumps({"kind": "sql", "explanation": "Orders last month.", "sql": LAST_MONTH})
    model = ScriptedChatModel(replies=[reply])
    (result,) = run_golden(one, evaluation_agent(demo, model, today=PIN))
    assert result.status == "pass", result.reason
    assert not result.gold_empty and result.reason != EMPTY_GOLD
    assert "'2026-11-01'" in result.sql and not reads_clock(result.sql)
    assert any("pinned day 2026-11-01" in fix for fix in result.gate_fixes)
    assert "Today's date is 2026-11-01" in str(model.seen[0][0].content)


def test_the_baseline_is_asked_on_the_pinned_day_too(demo: DuckDBConnector) -> None:
    golden = load_golden(DEMO_GOLDEN)
    (question,) = [q for q in golden.questions if q.id == "date-04"]
    one = GoldenSet((question,), warehouse="demo", today=PIN)
    model = ScriptedChatModel(replies=[f"```sql\n{LAST_MONTH}\n```"])
    baseline = NaiveBaseline(demo, model, pinned_today=PIN)
    assert "Today is 2026-11-01." in baseline.system_prompt()
    (result,) = run_golden(one, baseline)
    assert result.status == "pass", result.reason
