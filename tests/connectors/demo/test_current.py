"""CurrentDemo: a process that stays up past midnight serves a demo that still ends yesterday."""

from __future__ import annotations

import threading
from datetime import date, timedelta
from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import QueryResult, RunContext, WarehouseUnavailable
from connectors.demo.build import last_day_of, marker_path
from connectors.demo.current import CurrentDemo, day_links
from connectors.duckdb.connector import DuckDBConnector
from tests.support.botproc import data_dir_with
from tests.support.demo_day import TODAY

LAST_ORDER = "SELECT max(order_date) FROM orders"

#: A run of a few seconds, so the swap (a build of about a second) happens while it runs.
SLOW_LAST_ORDER = (
    "SELECT (SELECT max(order_date) FROM orders),"
    " (SELECT count(*) FROM range(1500000000) AS a WHERE a.range % 7 = 3)"
)

pytestmark = pytest.mark.slow  # every test builds a demo for a day other than the suite's


class Clock:
    """The injected `today`, moved on by hand; `asked` is set whenever it is read."""

    def __init__(self, day: date) -> None:
        self.day = day
        self.asked = threading.Event()

    def __call__(self) -> date:
        self.asked.set()
        return self.day


def last_order(connector: CurrentDemo | DuckDBConnector, sql: str = LAST_ORDER) -> object:
    return connector.run(sql, max_rows=1, timeout_s=120).rows[0][0]


@pytest.fixture
def data_dir(tmp_path: Path, demo_file: Path) -> Path:
    """A data directory holding the suite's demo, built for TODAY."""
    return data_dir_with(tmp_path / "data", demo_file)


def test_the_next_day_is_served_after_the_clock_moves_on(data_dir: Path) -> None:
    clock = Clock(TODAY)
    demo = CurrentDemo(data_dir, today=clock)
    try:
        assert last_order(demo) == TODAY - timedelta(days=1)
        clock.day = TODAY + timedelta(days=1)
        assert last_order(demo) == TODAY
        assert demo.last_day == TODAY
        assert last_day_of(data_dir / "demo.duckdb") == TODAY
        # the catalog too: the orders table's comment names the new last day
        orders = demo.describe("orders")
        assert TODAY.isoformat() in orders.description
        assert orders.name == "demo.main.orders"  # the same names every day
        clock.day = TODAY + timedelta(days=2)
        assert last_order(demo) == TODAY + timedelta(days=1)
        # yesterday's link stays (another process may still serve it), older ones go
        assert sorted(p.name for p in day_links(data_dir).iterdir()) == [
            TODAY.isoformat(),
            (TODAY + timedelta(days=1)).isoformat(),
        ]
    finally:
        demo.close()


def test_a_call_in_flight_keeps_its_connector_until_it_ends(data_dir: Path) -> None:
    clock = Clock(TODAY)
    demo = CurrentDemo(data_dir, today=clock)
    try:
        with demo.serving() as old:
            clock.day = TODAY + timedelta(days=1)
            assert last_order(demo) == TODAY  # swapped while `old` is in use
            assert last_order(old) == TODAY - timedelta(days=1)  # still open, on the old file
        with pytest.raises(WarehouseUnavailable):  # closed once its last call ended
            last_order(old)
        assert last_order(demo) == TODAY
    finally:
        demo.close()


def test_a_run_in_flight_during_the_swap_completes(data_dir: Path) -> None:
    clock = Clock(TODAY)
    demo = CurrentDemo(data_dir, today=clock)
    results: list[QueryResult | BaseException] = []

    def slow_run() -> None:
        try:
            results.append(
                demo.run(
                    SLOW_LAST_ORDER,
                    max_rows=1,
                    timeout_s=120,
                    context=RunContext(job_key="slow"),
                )
            )
        except BaseException as exc:  # reported below, not lost in the thread
            results.append(exc)

    try:
        assert last_order(demo) == TODAY - timedelta(days=1)  # a worker is started already
        running = threading.Thread(target=slow_run)
        clock.asked.clear()
        running.start()
        clock.asked.wait()  # the slow run read the old day: it runs on the old connector
        clock.day = TODAY + timedelta(days=1)
        assert last_order(demo) == TODAY
        running.join(timeout=120)
        assert not running.is_alive()
        [result] = results
        assert isinstance(result, QueryResult), result
        assert result.rows[0][0] == TODAY - timedelta(days=1)
    finally:
        demo.close()


def test_a_rebuild_that_fails_keeps_serving_the_old_day(data_dir: Path) -> None:
    clock = Clock(TODAY)
    demo = CurrentDemo(data_dir, today=clock)
    try:
        marker_path(data_dir / "demo.duckdb").unlink()
        (data_dir / "demo.duckdb").unlink()
        (data_dir / "demo.duckdb").mkdir()  # the new file cannot be renamed over a folder
        clock.day = TODAY + timedelta(days=1)
        assert last_order(demo) == TODAY - timedelta(days=1)
        assert demo.last_day == TODAY - timedelta(days=1)
    finally:
        demo.close()


def test_a_pinned_day_never_rebuilds(data_dir: Path) -> None:
    demo = data_dir / "demo.duckdb"
    before = demo.stat().st_mtime_ns
    assert date.today() != TODAY, "the pin must differ from the real date for this to test it"
    connector = open_connector("demo", data_dir=data_dir, today=TODAY)
    try:
        assert not isinstance(connector, CurrentDemo)
        assert last_order(connector) == TODAY - timedelta(days=1)
        assert demo.stat().st_mtime_ns == before
    finally:
        connector.close()


def test_unpinned_demo_follows_the_real_date(data_dir: Path) -> None:
    connector = open_connector("demo", data_dir=data_dir)
    try:
        assert isinstance(connector, CurrentDemo)
        assert last_order(connector) == date.today() - timedelta(days=1)
    finally:
        connector.close()
