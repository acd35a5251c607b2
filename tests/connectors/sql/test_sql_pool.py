"""SqlConnector with more runs than pooled connections (real PostgreSQL and MariaDB).

The bot may have many more workers than the warehouse has pooled connections: a run that finds
them all busy queues until one is free, for up to its own time limit, and a cancel ends that wait
at once. Only a wait that runs out fails, saying what happened and what to do.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager

import pytest

from connectors.base import QueryCancelled, RunContext, WarehouseUnavailable
from connectors.sql.connector import SqlConnector
from tests.connectors.sql.sql_contract import wait_until
from tests.support.sql_fixtures import Sample, mysql_sample, postgres_sample

SAMPLES: dict[str, Callable[[], AbstractContextManager[Sample]]] = {
    "postgresql": postgres_sample,
    "mysql": mysql_sample,
}

#: A statement that holds its connection for half a second, per engine.
SLEEP = {"postgresql": "SELECT pg_sleep(0.5)", "mysql": "SELECT SLEEP(0.5)"}


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def sample(request: pytest.FixtureRequest) -> Iterator[Sample]:
    with SAMPLES[request.param]() as loaded:
        yield loaded


@pytest.fixture
def single(sample: Sample) -> Iterator[SqlConnector]:
    """A connector with one pooled connection."""
    connector = SqlConnector(sample.url, pool_size=1)
    yield connector
    connector.close()


def hold_the_connection(
    pool: ThreadPoolExecutor, sample: Sample, connector: SqlConnector
) -> tuple[str, Future[object]]:
    """Start the sample's slow statement (60 s) under a job key; return once it runs."""
    key = f"slow-{uuid.uuid4().hex}"
    slow = pool.submit(
        connector.run, sample.slow_sql, max_rows=1, timeout_s=120, context=RunContext(key)
    )
    wait_until(lambda: sample.is_running(sample.slow_sql), what="the slow statement")
    return key, slow


def stop(connector: SqlConnector, key: str, slow: Future[object]) -> None:
    assert connector.cancel(key)
    with pytest.raises(QueryCancelled):
        slow.result(timeout=60)  # a guard: the statement would run 60 s


@pytest.mark.slow
def test_more_runs_than_connections_all_succeed(sample: Sample) -> None:
    connector = SqlConnector(sample.url, pool_size=4)
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            runs = [
                pool.submit(connector.run, SLEEP[sample.engine], max_rows=1, timeout_s=30)
                for _ in range(8)
            ]
            results = [run.result(timeout=60) for run in runs]
        assert [r.total_rows for r in results] == [1] * 8
        assert connector.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]
    finally:
        connector.close()


def test_a_queued_run_can_be_cancelled_while_the_connection_stays_busy(
    sample: Sample, single: SqlConnector
) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        slow_key, slow = hold_the_connection(pool, sample, single)
        key = f"queued-{uuid.uuid4().hex}"
        queued = pool.submit(
            single.run, "SELECT 1", max_rows=1, timeout_s=60, context=RunContext(key)
        )
        wait_until(lambda: single.cancel(key), what="the queued run to be tracked")
        with pytest.raises(QueryCancelled):
            queued.result(timeout=30)  # a guard: the wait would last 60 s
        assert sample.is_running(sample.slow_sql), "the cancel stopped only the queued run"
        assert not slow.done()
        stop(single, slow_key, slow)
    assert single.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]


@pytest.mark.slow
def test_a_wait_that_runs_out_says_what_happened(sample: Sample, single: SqlConnector) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        slow_key, slow = hold_the_connection(pool, sample, single)
        try:
            with pytest.raises(WarehouseUnavailable) as caught:
                single.run("SELECT 1", max_rows=1, timeout_s=0.5)
        finally:
            stop(single, slow_key, slow)
    message = caught.value.message
    assert "did not start" in message and "1 connection to" in message and "0.5 s" in message
    assert "Ask again" in caught.value.hint
    assert not caught.value.retryable_by_repair
    assert single.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]
