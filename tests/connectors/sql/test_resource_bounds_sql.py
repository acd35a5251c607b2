"""Issue 15 items 4 and 5 on the real PostgreSQL, MariaDB and SQLite: a result's bytes are bounded
per value and in all, the engine's own bounds are set for each run, and a run that reaches a bound
is stopped with a message naming the bound's setting while the same connector goes on serving.

The bounds here are tiny (a value of 1,000 bytes, a result of 64 KiB) so each attack hits them at
once; each test also runs the same statement with roomy bounds, to show the bound is what
stopped it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import Warehouse
from bot.doctor.deployment import check_warehouse
from connectors.limits import MIB, ResourceLimitExceeded, RunLimits
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import Sample, mysql_sample, postgres_sample, sqlite_sample

TINY = RunLimits(max_cell_bytes=1000, max_result_bytes=64 * 1024, engine_memory_mb=32)
ROOMY = RunLimits(max_cell_bytes=10 * MIB, max_result_bytes=64 * MIB)

#: Per engine: a statement whose first value is 100,000 bytes long, built by the issue's attack
#: (repeat over a series; REPEAT over a recursive CTE) or, for SQLite, by hex(zeroblob()):
#: SQLite's printf() past the length limit returns NULL instead of failing (see the last test).
LONG_VALUE = {
    "postgresql": "SELECT repeat('x', 100000) AS v FROM generate_series(1, 1000)",
    "mysql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
    "SELECT REPEAT('x', 100000) AS v FROM r",
    "sqlite": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
    "SELECT hex(zeroblob(50000)) AS v FROM r",
}
#: Per engine: 1,000 rows of 900 bytes each (900 KB in all, each value under the cell bound).
MANY_ROWS = {
    "postgresql": "SELECT repeat('y', 900) AS v FROM generate_series(1, 1000)",
    "mysql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
    "SELECT REPEAT('y', 900) AS v FROM r",
    "sqlite": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
    "SELECT printf('%.*c', 900, 'y') AS v FROM r",
}


@pytest.fixture(scope="module", params=["postgresql", "mysql", "sqlite"])
def sample(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sample]:
    if request.param == "postgresql":
        with postgres_sample() as loaded:
            yield loaded
    elif request.param == "mysql":
        with mysql_sample() as loaded:
            yield loaded
    else:
        with sqlite_sample(tmp_path_factory.mktemp("bounds")) as loaded:
            yield loaded


@pytest.fixture(scope="module")
def tiny(sample: Sample) -> Iterator[SqlConnector]:
    connector = SqlConnector(sample.url, pool_size=1, limits=TINY)
    yield connector
    connector.close()


@pytest.fixture(scope="module")
def roomy(sample: Sample) -> Iterator[SqlConnector]:
    connector = SqlConnector(sample.url, pool_size=1, limits=ROOMY)
    yield connector
    connector.close()


def serves(connector: SqlConnector) -> None:
    """The connector (its one pooled connection) answers a normal question afterwards."""
    result = connector.run("SELECT 1 + 1", max_rows=10, timeout_s=30)
    assert result.rows == [(2,)]


@pytest.mark.slow
def test_a_value_longer_than_the_cell_bound_stops_the_run(
    sample: Sample, tiny: SqlConnector, roomy: SqlConnector
) -> None:
    sql = LONG_VALUE[sample.engine]
    unbounded = roomy.run(sql, max_rows=1, timeout_s=30)
    assert len(unbounded.rows[0][0]) == 100_000 and unbounded.total_rows == 1000

    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=1000, timeout_s=30)
    assert "QUERYBOT_MAX_CELL_BYTES" in caught.value.message
    assert "aggregate" in caught.value.hint
    serves(tiny)


def test_a_long_value_past_the_row_cap_is_stopped_too(sample: Sample, tiny: SqlConnector) -> None:
    # Rows past the cap are counted, not kept, but the bot still reads each one.
    with pytest.raises(ResourceLimitExceeded, match="QUERYBOT_MAX_CELL_BYTES"):
        tiny.run(LONG_VALUE[sample.engine], max_rows=0, timeout_s=30)
    serves(tiny)


def test_kept_rows_over_the_result_bound_stop_the_run(
    sample: Sample, tiny: SqlConnector, roomy: SqlConnector
) -> None:
    sql = MANY_ROWS[sample.engine]
    assert len(roomy.run(sql, max_rows=1000, timeout_s=30).rows) == 1000

    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=1000, timeout_s=30)
    assert "QUERYBOT_MAX_RESULT_MB" in caught.value.message
    # Under the row cap that fits the bound, the same statement is fine (the rest are counted).
    few = tiny.run(sql, max_rows=10, timeout_s=30)
    assert len(few.rows) == 10 and few.total_rows == 1000
    serves(tiny)


def test_the_engine_bounds_are_set_for_each_run(sample: Sample, tiny: SqlConnector) -> None:
    if sample.engine == "postgresql":
        shown = tiny.run("SELECT current_setting('work_mem')", max_rows=1, timeout_s=30)
        assert shown.rows == [("2MB",)]  # 32 MiB / 16
    elif sample.engine == "mysql":
        shown = tiny.run("SELECT @@tmp_table_size, @@max_heap_table_size", max_rows=1, timeout_s=30)
        assert shown.rows == [(4 * MIB, 4 * MIB)]  # 32 MiB / 8
    else:  # no memory setting per connection; the value length limit is the engine's bound
        assert tiny.run("SELECT length(zeroblob(1000))", max_rows=1, timeout_s=30).rows == [(1000,)]
        with pytest.raises(ResourceLimitExceeded, match="QUERYBOT_MAX_CELL_BYTES"):
            tiny.run("SELECT length(zeroblob(1001))", max_rows=1, timeout_s=30)


def test_sqlite_never_builds_a_value_past_the_bound(tmp_path: Path) -> None:
    """SQLite itself (SQLITE_LIMIT_LENGTH) refuses to build a long value, before it exists:
    zeroblob() fails, printf() (the issue's attack) gives NULL, whatever length it asks."""
    with sqlite_sample(tmp_path) as sample:
        connector = SqlConnector(sample.url, pool_size=1, limits=TINY)
        try:
            with pytest.raises(ResourceLimitExceeded, match="QUERYBOT_MAX_CELL_BYTES") as caught:
                connector.run("SELECT length(zeroblob(2000000000))", max_rows=1, timeout_s=30)
            assert "too big" in caught.value.engine_message
            attack = (
                "SELECT length(printf('%.*c', 20000000, 'x')), length(printf('%.*c', 999, 'x'))"
            )
            assert connector.run(attack, max_rows=1, timeout_s=30).rows == [(None, 999)]
            serves(connector)
        finally:
            connector.close()


@pytest.mark.slow
def test_postgres_temp_file_limit_stops_a_spill_and_the_doctor_says_when_it_is_unset() -> None:
    """The login cannot set temp_file_limit itself (superuser only). Unset, the connector refuses
    to open and the doctor says so with the ALTER ROLE to run; QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP
    lets it run (the doctor notes the accepted risk); set on the role, it stops a large sort
    with the bound named."""
    with postgres_sample() as sample:
        role = sample.extra["name"]
        sample.admin([f"ALTER ROLE {role} RESET temp_file_limit"])
        warehouse = Warehouse(name="pg", spec=sample.url, shown_spec="pg")
        accepted = replace(TINY, allow_unbounded_temp=True)

        def opener(w: Warehouse) -> SqlConnector:
            return SqlConnector(w.spec, pool_size=1, limits=TINY)

        unset = check_warehouse(warehouse, opener, timeout_s=30)
        assert any(
            line.status == "fail"
            and "does not open" in line.text
            and f"ALTER ROLE {role} SET temp_file_limit = '2GB';" in line.text
            and "QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP=true" in line.text
            for line in unset.lines
        ), unset.lines
        risky = check_warehouse(
            warehouse, lambda w: SqlConnector(w.spec, pool_size=1, limits=accepted), timeout_s=30
        )
        assert any(
            line.status == "note"
            and f"ALTER ROLE {role} SET temp_file_limit" in line.text
            and "QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP=true accepts" in line.text
            for line in risky.lines
        ), risky.lines

        spill = (
            "SELECT count(*) FROM (SELECT g FROM generate_series(1, 3000000) g ORDER BY g DESC) s"
        )
        connector = SqlConnector(sample.url, pool_size=1, limits=accepted)
        try:
            assert connector.run(spill, max_rows=1, timeout_s=60).rows == [(3000000,)]
        finally:
            connector.close()
        sample.admin([f"ALTER ROLE {role} SET temp_file_limit = '1MB'"])

        bounded = check_warehouse(warehouse, opener, timeout_s=30)
        assert any(
            line.status == "ok" and "temp_file_limit = 1MB" in line.text for line in bounded.lines
        ), bounded.lines
        connector = opener(warehouse)
        try:
            with pytest.raises(ResourceLimitExceeded) as caught:
                connector.run(spill, max_rows=1, timeout_s=60)
            assert "temp_file_limit" in caught.value.message
            serves(connector)
        finally:
            connector.close()
