"""The model is told today's date (the pinned one when pinned) and which dates the data covers,
read once per catalog through the connector where values may be read live."""

from __future__ import annotations

import datetime as dt
import json

from agent.catalog.date_range import DateRanges, range_sql
from agent.context import AgentLimits
from agent.evaluation.runner import evaluation_agent
from agent.model.providers import ScriptedChatModel
from connectors.duckdb.connector import DuckDBConnector

COUNT = json.dumps({"kind": "sql", "explanation": "Orders.", "sql": "SELECT count(*) FROM orders"})


def system_prompt_of(demo: DuckDBConnector, *, profile: bool, today: dt.date | None) -> str:
    model = ScriptedChatModel(replies=[COUNT])
    agent = evaluation_agent(demo, model, limits=AgentLimits(profile_values=profile), today=today)
    try:
        agent.ask("t1", "How many orders did we get?", user="U1")
    finally:
        agent.deps.catalog.wait_idle(timeout_s=60)
    return str(model.seen[0][0].content)


def test_the_ranges_are_one_query_a_table(demo: DuckDBConnector) -> None:
    orders = demo.describe("orders")
    assert range_sql(orders, "duckdb") == (
        'SELECT MIN("order_date"), MAX("order_date"), MIN("shipped_date"), MAX("shipped_date"),'
        ' MIN("delivered_date"), MAX("delivered_date") FROM demo.main.orders'
    )
    assert range_sql(demo.describe("regions"), "duckdb") is None
    ranges = DateRanges().of(demo, [orders, demo.describe("regions")])
    assert [r.text() for r in ranges] == [
        "orders.order_date from 2024-11-01 to 2026-10-31",
        "orders.shipped_date from 2024-11-01 to 2026-10-31",
        "orders.delivered_date from 2024-11-03 to 2026-10-31",
    ]


def test_the_model_is_told_the_pinned_day_and_the_datas_dates(demo: DuckDBConnector) -> None:
    prompt = system_prompt_of(demo, profile=True, today=dt.date(2026, 11, 1))
    assert "Today's date is 2026-11-01 (current_date in SQL)." in prompt
    assert "The dates in the data: " in prompt
    assert "orders.order_date from 2024-11-01 to 2026-10-31" in prompt
    assert "a period outside them has no rows" in prompt


def test_without_live_values_no_dates_are_read_and_today_is_the_real_date(
    demo: DuckDBConnector,
) -> None:
    prompt = system_prompt_of(demo, profile=False, today=None)
    assert f"Today's date is {dt.date.today().isoformat()} " in prompt
    assert "The dates in the data" not in prompt
