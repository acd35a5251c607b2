"""Issue 36 class 3 on the real SQLite: a statement whose single virtual-machine steps take
seconds (string functions on megabyte values) still ends at its timeout plus the documented
grace, because it runs in a worker process that is killed then (connectors/sql/sqlite_worker.py).
In the bot's own process the first attack below ran 65 s against a 3 s timeout.

Elapsed times are asserted only against the bound docs/safety.md promises, generously: the
timeout plus `worker_proc.GRACE_S`, plus `_SLACK_S` for starting a worker and reaping one on a
busy machine. Each attack takes over a minute uninterrupted, so the assertion can fail.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from connectors.base import QueryCancelled, QueryTimeout, RunContext
from connectors.limits import MIB, RunLimits
from connectors.sql.connector import SqlConnector
from connectors.workers import proc as worker_proc
from tests.support.sql_fixtures import sqlite_sample

TIMEOUT_S = 3.0

#: Starting a fresh interpreter for the next run and reaping the killed one, on 2 shared cores.
_SLACK_S = 5.0

_INSTR = "instr(printf('%.*c', 1000000, 'a'), printf('%.*c', {n}, 'a') || 'b')"
_TWELVE_ROWS = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 12) "

#: The issue's attacks: each step compares half a megabyte at half a million places.
ATTACKS = {
    "twelve-instr-in-one-expression": "SELECT "
    + " + ".join(_INSTR.format(n=500000 + i) for i in range(1, 13)),
    "instr-over-a-12-row-cte": _TWELVE_ROWS + f"SELECT sum({_INSTR.format(n='500000 + i')}) FROM r",
    # two megabytes searched for one: about 20 s in one step on a fast core (one searched for
    # half of one took under 4 s there, within the grace, so a cancel found no worker to kill)
    "replace-on-megabyte-strings": "SELECT length(replace(printf('%.*c', 2000000, 'a'), "
    "printf('%.*c', 1000000, 'a') || 'b', 'c'))",
}


@pytest.fixture(scope="module")
def connector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlConnector]:
    with sqlite_sample(tmp_path_factory.mktemp("sqlite-workers")) as sample:
        # cells of up to 4 MiB (the default is 1), for the two-megabyte attack above
        connector = SqlConnector(sample.url, pool_size=2, limits=RunLimits(max_cell_bytes=4 * MIB))
        yield connector
        connector.close()


def workers() -> list[int]:
    """This process's live SQLite worker processes."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except FileNotFoundError:  # the thread ended after it was listed: it has no children
            continue
        for pid in children:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            if b"connectors.sql.sqlite_worker" in cmdline:  # a zombie's is empty
                found.append(int(pid))
    return found


def serves(connector: SqlConnector) -> None:
    result = connector.run("SELECT count(*) FROM employees", max_rows=1, timeout_s=30)
    assert result.rows[0][0] > 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(ATTACKS))
def test_a_statement_with_seconds_long_steps_ends_at_its_timeout_plus_grace(
    connector: SqlConnector, kind: str
) -> None:
    serves(connector)  # a worker is up: its start is not part of the run's time
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.monotonic()
        attack = pool.submit(connector.run, ATTACKS[kind], max_rows=1, timeout_s=TIMEOUT_S)
        # The bot process stays responsive meanwhile: another run on the connector is answered
        # before the attack ends.
        serves(connector)
        assert not attack.done()
        with pytest.raises(QueryTimeout) as caught:
            attack.result(timeout=120)
        elapsed = time.monotonic() - started
    assert caught.value.timeout_s == TIMEOUT_S
    assert "ran longer than 3 s" in caught.value.message
    assert elapsed < TIMEOUT_S + worker_proc.GRACE_S + _SLACK_S, elapsed
    serves(connector)


@pytest.mark.slow
def test_a_cancel_of_such_a_statement_ends_it_within_the_grace(connector: SqlConnector) -> None:
    serves(connector)
    before = set(workers())
    context = RunContext(job_key="stuck-in-one-step")
    with ThreadPoolExecutor(max_workers=1) as pool:
        attack = pool.submit(
            connector.run, ATTACKS["replace-on-megabyte-strings"], max_rows=1, timeout_s=600,
            context=context,
        )  # fmt: skip
        while not connector.cancel("stuck-in-one-step"):
            assert not attack.done(), attack.result()
        cancelled = time.monotonic()
        with pytest.raises(QueryCancelled):
            attack.result(timeout=120)
    assert time.monotonic() - cancelled < worker_proc.GRACE_S + _SLACK_S
    assert before - set(workers()), "the worker that did not stop was killed"
    serves(connector)


def test_a_timeout_between_steps_is_the_engines_own_and_keeps_the_worker(
    connector: SqlConnector,
) -> None:
    """A statement of many cheap steps stops at the progress handler's deadline, in the worker,
    which then serves the next run (no process is killed for it)."""
    serves(connector)
    before = set(workers())
    endless = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    )
    with pytest.raises(QueryTimeout):
        connector.run(endless, max_rows=1, timeout_s=0.3)
    assert before <= set(workers())
    serves(connector)


def test_a_worker_that_died_between_runs_is_replaced(connector: SqlConnector) -> None:
    serves(connector)
    killed = workers()
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    for pid in killed:  # reapable (every thread gone), so the pool can tell; not reaped here
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            time.sleep(0.01)
    serves(connector)
    assert not set(killed) & set(workers())
