"""End to end, an alert on a scheduled question through the real bot process, DBOS and the Slack
stand-in under a fake clock, on both state back ends (SQLite, PostgreSQL; `Scheduled` in
tests/e2e/schedule_flow.py sets it up): it posts when it fires, stays quiet while it still
fires, posts once when it clears (with the figures), then stays quiet again. What changes the
figure is the warehouse itself: rows deleted from the bot's copy of the demo while it is
stopped. Each start's first run is the catch-up for the runs missed before it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from bot.schedules.records import Alert
from tests.e2e import schedule_flow
from tests.e2e.schedule_flow import LONDON, REGIONS, Scheduled, posts

scheduled = schedule_flow.scheduled


def keep_regions(warehouse: Path, keep: int) -> None:
    """Delete every region past the first `keep` from the demo warehouse at `warehouse`, and
    what refers to them (returns, order items, orders, customers), so its foreign keys hold:
    DuckDB refuses to delete a row another table still refers to."""
    customers = f"SELECT customer_id FROM customers WHERE region_id > {keep}"
    orders = f"SELECT order_id FROM orders WHERE customer_id IN ({customers})"
    items = f"SELECT order_item_id FROM order_items WHERE order_id IN ({orders})"
    with duckdb.connect(str(warehouse)) as con:
        con.execute(f"DELETE FROM returns WHERE order_item_id IN ({items})")
        con.execute(f"DELETE FROM order_items WHERE order_id IN ({orders})")
        con.execute(f"DELETE FROM orders WHERE customer_id IN ({customers})")
        con.execute(f"DELETE FROM customers WHERE region_id > {keep}")
        con.execute(f"DELETE FROM regions WHERE region_id > {keep}")
        assert con.execute(REGIONS.replace("demo.main.", "")).fetchall() == [(keep,)]


def test_an_alert_fires_stays_quiet_clears_then_stays_quiet(scheduled: Scheduled) -> None:
    # every three seconds (DBOS reads a sixth field, first, as seconds): 5 regions > 3
    made = scheduled.schedule(
        dt.datetime(2027, 1, 15, 8, tzinfo=LONDON),
        cron="*/3 * * * * *",
        alert=Alert("above", 3),
    )
    quiet = rf"Schedule {made.schedule_id} run \S+ quiet"
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, tzinfo=LONDON))
    try:
        [fired] = scheduled.wait_posts(1)
        scheduled.wait_lines(quiet, 2)  # two more runs, both quiet: it still fires
    finally:
        scheduled.bot.stop()
    assert "Alert: 5 is above 3." in fired.all_text()
    assert posts(scheduled.slack) == [fired]

    keep_regions(scheduled.warehouse, 2)  # 2 regions: no longer above 3
    after = scheduled.mark()
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, 10, tzinfo=LONDON))
    try:
        _, cleared = scheduled.wait_posts(2)
        scheduled.wait_lines(quiet, 2, after=after)  # quiet again: it no longer fires
    finally:
        scheduled.bot.stop()
    text = cleared.all_text()
    assert "Cleared: 2 now." in text and "(5 → 2)" in text, text
    assert "Alert:" not in text
    assert posts(scheduled.slack) == [fired, cleared], "one post as it fired, one as it cleared"
