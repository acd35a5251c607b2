"""The demo warehouse: deterministic, fully commented, internally consistent, built atomically."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from connectors import open_connector
from connectors.demo.build import build_demo, demo_path, ensure_demo, last_day_of, marker_path
from connectors.duckdb.connector import DuckDBConnector
from tests.support.demo_day import TODAY

TABLES = ("regions", "customers", "products", "orders", "order_items", "returns", "sales")


def query(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def contents(path: Path) -> dict[str, object]:
    """Every table's rows (as one hash), the comments, and a few aggregates."""
    hashes = {
        table: query(
            path,
            f"SELECT count(*), md5(string_agg(CAST(t AS VARCHAR), chr(10)"
            f" ORDER BY CAST(t AS VARCHAR))) FROM {table} AS t",
        )
        for table in TABLES
    }
    comments = query(
        path,
        "SELECT table_name, column_name, comment FROM duckdb_columns()"
        " WHERE NOT internal ORDER BY ALL",
    )
    revenue = query(
        path,
        "SELECT date_trunc('month', order_date) AS m, region_id, sum(net_revenue)"
        " FROM sales GROUP BY ALL ORDER BY ALL",
    )
    return {"hashes": hashes, "comments": comments, "revenue": revenue}


@pytest.mark.slow
def test_two_builds_hold_the_same_data(demo_file: Path, tmp_path: Path) -> None:
    again = build_demo(tmp_path / "demo.duckdb", date(2026, 10, 31))
    # read from a copy: once the session's `demo` connector has the file open, this process
    # cannot open it with other settings
    first = Path(shutil.copy(demo_file, tmp_path / "first.duckdb"))
    assert contents(again) == contents(first)


def test_tables_and_sizes(demo: DuckDBConnector) -> None:
    counts = {t.short_name: t.row_count for t in demo.list_tables()}
    assert set(counts) == set(TABLES)
    assert (counts["regions"], counts["customers"], counts["products"]) == (5, 2000, 100)
    assert 18_000 <= (counts["orders"] or 0) <= 23_000
    assert 45_000 <= (counts["order_items"] or 0) <= 56_000
    assert (counts["returns"] or 0) > 1000
    assert counts["sales"] is None  # a view


def test_every_table_and_column_is_commented(demo: DuckDBConnector) -> None:
    for table in demo.list_tables():
        assert table.name == f"demo.main.{table.short_name}"
        assert len(table.description) > 20, table.name
        for column in table.columns:
            assert len(column.description) > 5, f"{table.name}.{column.name}"


def test_comments_define_revenue_and_status(demo: DuckDBConnector) -> None:
    items = demo.describe("order_items")
    assert "quantity * unit_price * (1 - discount)" in items.description
    status = next(c for c in demo.describe("orders").columns if c.name == "status")
    for value in ("pending", "shipped", "delivered", "cancelled"):
        assert f"'{value}'" in status.description


def test_orders_cover_two_years_to_a_fixed_end(demo: DuckDBConnector) -> None:
    result = demo.run(
        "SELECT min(order_date), max(order_date), count(DISTINCT date_trunc('month', order_date))"
        " FROM orders",
        max_rows=1,
        timeout_s=30,
    )
    assert result.rows == [(date(2024, 11, 1), date(2026, 10, 31), 24)]


def test_recent_periods_have_data(demo: DuckDBConnector) -> None:
    """'Last month' and 'last quarter' seen from November 2026."""
    result = demo.run(
        "SELECT r.region_name, sum(s.net_revenue) FROM sales AS s JOIN regions AS r USING"
        " (region_id) WHERE s.order_date >= DATE '2026-07-01' AND s.order_date < DATE '2026-10-01'"
        " GROUP BY ALL ORDER BY 2 DESC",
        max_rows=10,
        timeout_s=30,
    )
    assert len(result.rows) == 5
    assert all(isinstance(v, Decimal) and v > 0 for _, v in result.rows)
    last_month = demo.run(
        "SELECT count(*) FROM orders WHERE order_date >= DATE '2026-10-01'",
        max_rows=1,
        timeout_s=30,
    )
    assert last_month.rows[0][0] > 300


@pytest.mark.parametrize(
    "violations",
    [
        # orders placed before the customer signed up
        "SELECT count(*) FROM orders JOIN customers USING (customer_id)"
        " WHERE order_date < signup_date",
        # products sold outside their launch and discontinuation dates
        "SELECT count(*) FROM order_items JOIN orders USING (order_id) JOIN products"
        " USING (product_id) WHERE order_date < launch_date OR order_date >= discontinued_date",
        # fulfilment dates that contradict the status
        "SELECT count(*) FROM orders WHERE CASE status"
        " WHEN 'cancelled' THEN shipped_date IS NOT NULL OR delivered_date IS NOT NULL"
        " WHEN 'pending' THEN shipped_date IS NOT NULL OR delivered_date IS NOT NULL"
        " WHEN 'shipped' THEN shipped_date IS NULL OR delivered_date IS NOT NULL"
        " WHEN 'delivered' THEN NOT (order_date <= shipped_date AND shipped_date"
        " < delivered_date AND delivered_date <= DATE '2026-10-31') ELSE true END",
        # returns of undelivered orders, before delivery, after the end, or over the line
        "SELECT count(*) FROM returns AS r JOIN order_items AS i USING (order_item_id)"
        " JOIN orders AS o USING (order_id) WHERE o.status <> 'delivered'"
        " OR r.return_date <= o.delivered_date OR r.return_date > DATE '2026-10-31'"
        " OR r.quantity > i.quantity"
        " OR r.refund_amount <> round(r.quantity * i.unit_price * (1 - i.discount), 2)",
        # impossible quantities, prices and discounts
        "SELECT count(*) FROM order_items WHERE quantity < 1 OR unit_price <= 0"
        " OR discount NOT IN (0, 0.10, 0.15, 0.20, 0.25)",
        "SELECT count(*) FROM products WHERE unit_cost >= list_price OR unit_cost <= 0",
        # shipping is free from 50 USD of items
        "SELECT count(*) FROM orders JOIN (SELECT order_id, sum(round(quantity * unit_price"
        " * (1 - discount), 2)) AS items FROM order_items GROUP BY ALL) USING (order_id)"
        " WHERE (items >= 50) <> (shipping_fee = 0)",
        # every country in one region
        "SELECT count(*) FROM (SELECT country FROM customers GROUP BY ALL"
        " HAVING count(DISTINCT region_id) > 1)",
        # the sales view: every non-cancelled line, revenue as documented
        "SELECT abs((SELECT count(*) FROM order_items JOIN orders USING (order_id)"
        " WHERE status <> 'cancelled') - (SELECT count(*) FROM sales))"
        " + (SELECT count(*) FROM sales JOIN order_items AS i USING (order_item_id)"
        " WHERE net_revenue <> round(i.quantity * i.unit_price * (1 - i.discount), 2))",
    ],
)
def test_data_is_consistent(demo: DuckDBConnector, violations: str) -> None:
    assert demo.run(violations, max_rows=1, timeout_s=30).rows == [(0,)]


def test_ensure_demo_builds_once_and_leaves_no_temporary_files(demo_file: Path) -> None:
    data_dir = demo_file.parent
    assert demo_path(data_dir) == demo_file
    before = demo_file.stat().st_mtime_ns
    assert ensure_demo(data_dir, today=TODAY) == demo_file
    assert demo_file.stat().st_mtime_ns == before
    assert sorted(p.name for p in data_dir.iterdir()) == ["demo.duckdb", "demo.last-day"]
    assert last_day_of(demo_file) == date(2026, 10, 31)


@pytest.mark.slow
def test_the_unpinned_demo_ends_yesterday(tmp_path: Path) -> None:
    """A newcomer's "last month" has data: with no pinned day the history ends yesterday."""
    path = ensure_demo(tmp_path / "new" / "data")
    assert path == tmp_path / "new" / "data" / "demo.duckdb"
    yesterday = date.today() - timedelta(days=1)
    first, last, months = query(
        path,
        "SELECT min(order_date), max(order_date), count(DISTINCT date_trunc('month', order_date))"
        " FROM orders",
    )[0]
    assert last == yesterday
    assert (last - first).days == (date(2026, 10, 31) - date(2024, 11, 1)).days
    assert 24 <= months <= 25
    assert last_day_of(path) == yesterday


@pytest.mark.slow
def test_a_pinned_demo_ends_the_day_before_and_a_stale_one_is_rebuilt(
    demo_file: Path, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    stale = Path(shutil.copy(demo_file, data_dir / "demo.duckdb"))
    shutil.copy(marker_path(demo_file), marker_path(stale))
    # read from a copy: the session's `demo` connector has the file open with other settings
    before = Path(shutil.copy(demo_file, tmp_path / "before.duckdb"))
    pinned = ensure_demo(data_dir, today=date(2027, 3, 15))
    assert pinned == stale
    last = date(2027, 3, 14)
    shift = last - date(2026, 10, 31)
    assert query(
        pinned, "SELECT max(order_date), max(return_date) <= max(order_date) FROM orders, returns"
    ) == [(last, True)]
    assert last_day_of(pinned) == last
    # the same rows, every date moved by the same days; comments naming dates move with them
    old = query(before, "SELECT order_id, order_date, shipped_date FROM orders ORDER BY 1")
    new = query(pinned, "SELECT order_id, order_date, shipped_date FROM orders ORDER BY 1")
    assert new == [(i, d + shift, s and s + shift) for i, d, s in old]
    comment = query(pinned, "SELECT comment FROM duckdb_tables() WHERE table_name = 'orders'")
    assert f"to {last.isoformat()}." in comment[0][0]
    assert sorted(p.name for p in data_dir.iterdir()) == ["demo.duckdb", "demo.last-day"]


def test_a_file_without_its_last_day_is_built_again(tmp_path: Path) -> None:
    """A copy without its marker, or a file an older build left, is not trusted."""
    path = tmp_path / "demo.duckdb"
    path.write_text("mine")
    assert last_day_of(path) is None
    assert build_demo(path, date(2026, 10, 31)) == path
    assert query(path, "SELECT count(*) FROM regions") == [(5,)]


def test_the_demo_spec_opens_the_demo_of_the_day_it_is_given(
    demo_file: Path, tmp_path: Path
) -> None:
    """`open_connector("demo", today=...)` (the bot passes QUERYBOT_TODAY) keeps a demo that
    ends the day before, and builds none."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    copied = Path(shutil.copy(demo_file, data_dir / "demo.duckdb"))
    shutil.copy(marker_path(demo_file), marker_path(copied))
    before = copied.stat().st_mtime_ns
    connector = open_connector("demo", data_dir=data_dir, today=TODAY)
    try:
        assert isinstance(connector, DuckDBConnector) and connector.path == copied
        assert copied.stat().st_mtime_ns == before, "not rebuilt"
    finally:
        connector.close()
