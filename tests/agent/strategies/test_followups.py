"""Suggested follow-ups: made from the answer's SQL, its rows and the schema of the tables read
(agent/strategies/followups.py), attached to answers by the graph when the strategy is on."""

from __future__ import annotations

from typing import Any

import pytest

from agent.catalog.snapshot import CatalogSnapshot, ColumnProfile, TableProfile
from agent.context import Strategies
from agent.strategies.followups import suggest
from connectors.base import ColumnInfo, TableInfo
from tests.agent.conftest import MakeAgent, reply

ORDERS = TableInfo(
    "shop.main.orders",
    (
        ColumnInfo("order_id", "INTEGER"),
        ColumnInfo("customer_name", "VARCHAR"),
        ColumnInfo("email", "VARCHAR"),
        ColumnInfo("region", "VARCHAR"),
        ColumnInfo("channel", "VARCHAR"),
        ColumnInfo("status", "VARCHAR"),
        ColumnInfo("city", "VARCHAR"),
        ColumnInfo("amount", "DECIMAL(10,2)"),
        ColumnInfo("order_date", "DATE"),
    ),
)


def snapshot(profiled: bool = True) -> CatalogSnapshot:
    profiles = {}
    if profiled:
        columns = {
            "region": ColumnProfile(4, ("North", "South", "East", "West"), complete=True),
            "channel": ColumnProfile(3, ("web", "app", "shop"), complete=True),
            "status": ColumnProfile(2, ("open", "shipped"), complete=True),
            "city": ColumnProfile(900, ("Paris",)),
        }
        profiles = {"shop.main.orders": TableProfile(10_000, columns)}
    return CatalogSnapshot(tables=(ORDERS,), dialect="duckdb", profiles=profiles)


def answer(sql: str, columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {
        "sql": sql,
        "tables": ["shop.main.orders"],
        "columns": columns,
        "rows": rows,
        "total_rows": len(rows),
    }


def test_breakdown_period_comparison_and_drill_down() -> None:
    sql = (
        "SELECT region, SUM(amount) AS revenue FROM orders "
        "WHERE order_date >= DATE '2026-10-01' AND status = 'shipped' GROUP BY 1 ORDER BY 2 DESC"
    )
    rows = [["North", 10.0], ["South", 5.0]]
    assert suggest(answer(sql, ["region", "revenue"], rows), snapshot()) == [
        # status is pinned to one value and region grouped; channel has the fewest values left
        "Break this down by channel",
        "Compare with the previous period",
        "Drill into “North” (region)",
    ]


def test_unprofiled_columns_in_schema_order_and_no_drill_without_grouping() -> None:
    sql = "SELECT SUM(amount) AS revenue FROM orders"
    # ids, names and e-mails are no dimensions; without profiles, schema order decides
    assert suggest(answer(sql, ["revenue"], [[15.0]]), snapshot(profiled=False)) == [
        "Break this down by region",
        "Show this by month",
    ]


def test_time_series_and_wide_columns_are_not_suggested() -> None:
    sql = (
        "SELECT strftime(order_date, '%Y-%m') AS month, SUM(amount) AS revenue FROM orders "
        "WHERE region = 'North' AND channel = 'web' AND status = 'open' GROUP BY 1"
    )
    rows = [["2026-01", 1.0], ["2026-02", 2.0]]
    # region, channel and status are pinned, city has 900 values: no breakdown; the result
    # is a time series already: neither "by month" nor a drill into a month
    assert suggest(answer(sql, ["month", "revenue"], rows), snapshot()) == []


def test_unreadable_sql_suggests_nothing() -> None:
    assert suggest(answer("SELEC (", ["a"], [["x"]]), snapshot()) == []


BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"


@pytest.mark.slow
def test_answers_carry_follow_ups_when_switched_on(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    result = agent.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert result is not None
    assert result.follow_ups == ["Show this by month", "Drill into “North” (region)"]
    assert model.calls == 1

    agent, _, _ = make_agent([reply(BY_REGION)], strategies=Strategies(follow_ups=False))
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    result = agent.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert result is not None and result.follow_ups == []
