"""Value profiles from the statistics PostgreSQL and MariaDB keep, and scans where they keep none.

Real servers (the sample databases of sql_fixtures.py): the catalog reads an analysed table's
profile from statistics and sends it no query; a table never analysed, a view, or statistics the
login may not read fall back to scans, each reading at most `max_scan_rows` rows. MySQL 8's
histogram format (no MySQL 8 server runs here) is read from the manual's example shapes.
"""

from __future__ import annotations

import base64
import json

import pytest

from agent.catalog.profiling import ProfileLimits
from agent.catalog.snapshot import Catalog
from connectors.sql.connector import SqlConnector
from connectors.sql.mysql_stats import mysql_column
from tests.support.sent import record_runs
from tests.support.sql_fixtures import mysql_sample, postgres_sample

NAMES = ("Georgi", "Bezalel", "Parto", "Chirstian", "Kyoichi", "Anneke", "Tzvetan", "Saniya")
DEPARTMENTS = ("d001", "d002", "d003", "d004", "d005")


@pytest.mark.slow
def test_postgres_profiles_come_from_pg_stats_and_only_the_rest_is_scanned() -> None:
    with postgres_sample() as sample:
        login = sample.extra["name"]
        sample.admin(
            [
                # never analysed (autovacuum off, so it stays that way during the test)
                "CREATE TABLE hr.badges (badge_id INTEGER, colour TEXT)"
                " WITH (autovacuum_enabled = false)",
                "INSERT INTO hr.badges SELECT i, (ARRAY['red', 'blue'])[1 + i % 2]"
                " FROM generate_series(1, 10) AS i",
                f"GRANT SELECT ON hr.badges TO {login}",
            ]
        )
        connector = SqlConnector(sample.url)
        sent = record_runs(connector)
        try:
            snapshot = Catalog(connector, limits=ProfileLimits(max_scan_rows=1000)).refresh()
        finally:
            connector.close()
    employees = snapshot.profile("hr.employees")
    assert employees is not None and employees.row_count == 120
    first = employees.columns["first_name"]
    assert first.complete and first.distinct == 8 and set(first.values) == set(NAMES)
    assert employees.columns["dept_no"].complete
    assert set(employees.columns["dept_no"].values) == set(DEPARTMENTS)
    assert employees.columns["emp_no"].distinct == 120
    # unique values, all of them histogram bounds: complete, in order
    departments = snapshot.profile("hr.departments")
    assert departments is not None and departments.columns["dept_name"].complete
    assert departments.columns["dept_name"].values[0] == "Development"
    # the analysed tables are never read; the view and the unanalysed table are, bounded
    read = {"hr.current_salaries": 1, "hr.badges": 2}
    assert len(sent) == sum(read.values())
    for table, count in read.items():
        assert sum(f"FROM {table} LIMIT 1000)" in sql for sql in sent) == count
    badges = snapshot.profile("hr.badges")
    assert badges is not None and badges.row_count == 10
    assert badges.columns["colour"].complete and badges.columns["colour"].values == ("blue", "red")


def test_postgres_statistics_are_read_in_one_catalog_query() -> None:
    with postgres_sample() as sample:
        connector = SqlConnector(sample.url)
        try:
            tables = connector.list_tables()
            stats = connector.statistics(tables, values=3)
        finally:
            connector.close()
    assert set(stats) == {"hr.departments", "hr.employees", "hr.salaries"}  # not the view
    first = stats["hr.employees"].columns["first_name"]
    assert len(first.values) == 3 and not first.complete  # eight values, three asked for
    assert stats["hr.salaries"].columns["amount"].values == ()  # numbers: counts only


def test_mariadb_profiles_come_from_column_stats_when_the_login_may_read_them() -> None:
    with mysql_sample() as sample:
        db = login = sample.extra["name"]
        sample.admin(
            [
                f"GRANT SELECT ON mysql.column_stats TO '{login}'@'%'",
                f"GRANT SELECT ON mysql.table_stats TO '{login}'@'%'",
                "SET SESSION histogram_type = 'JSON_HB'",
                f"ANALYZE TABLE {db}.employees, {db}.departments PERSISTENT FOR ALL",
            ]
        )
        connector = SqlConnector(sample.url)
        sent = record_runs(connector)
        try:
            snapshot = Catalog(connector, limits=ProfileLimits(max_scan_rows=1000)).refresh()
        finally:
            connector.close()
    employees = snapshot.profile(f"{db}.employees")
    assert employees is not None
    first = employees.columns["first_name"]
    assert first.complete and first.distinct == 8 and set(first.values) == set(NAMES)
    assert employees.columns["dept_no"].complete
    assert set(employees.columns["dept_no"].values) == set(DEPARTMENTS)
    # employees is never read; a primary key has no histogram, so departments.dept_no is
    # (its count from statistics, its values by a scan); salaries has no text, the view no
    # statistics
    assert not any(f"{db}.employees " in sql for sql in sent)
    assert sum(f"{db}.departments LIMIT 1000)" in sql for sql in sent) == 2
    assert sum(f"{db}.current_salaries LIMIT 1000)" in sql for sql in sent) == 1
    assert len(sent) == 3


def test_mariadb_without_readable_column_stats_scans_text_columns_within_bounds() -> None:
    with mysql_sample() as sample:
        db = sample.extra["name"]
        connector = SqlConnector(sample.url)
        sent = record_runs(connector)
        try:
            snapshot = Catalog(connector, limits=ProfileLimits(max_scan_rows=1000)).refresh()
        finally:
            connector.close()
    employees = snapshot.profile(f"{db}.employees")
    assert employees is not None and employees.row_count == 120
    first = employees.columns["first_name"]
    assert first.complete and set(first.values) == set(NAMES)
    # index statistics give dept_no's count; the names are counted and listed by scans
    on_employees = [sql for sql in sent if f"{db}.employees LIMIT 1000)" in sql]
    assert len(on_employees) == 4
    assert sum("COUNT(DISTINCT" in sql for sql in on_employees) == 1
    assert "dept_no" not in next(sql for sql in on_employees if "COUNT(DISTINCT" in sql)


def _b64(text: str) -> str:
    return "base64:type254:" + base64.b64encode(text.encode()).decode()


def test_mysql_singleton_histograms_list_every_value_when_every_row_was_read() -> None:
    histogram = {
        "buckets": [[_b64("North"), 0.5], [_b64("South"), 0.75], [_b64("West"), 1.0]],
        "null-values": 0.0,
        "sampling-rate": 1.0,
        "histogram-type": "singleton",
        "data-type": "string",
    }
    profile = mysql_column(json.dumps(histogram), values=50)
    assert profile.complete and profile.values == ("North", "South", "West")
    assert profile.distinct == 3
    sampled = mysql_column({**histogram, "sampling-rate": 0.5}, values=50)
    assert not sampled.complete and sampled.values == ("North", "South", "West")
    assert not mysql_column(histogram, values=2).complete


def test_mysql_equi_height_histograms_give_counts_and_the_values_that_fill_a_bucket() -> None:
    histogram = {
        "buckets": [
            [_b64("Alpha"), _b64("Alpha"), 0.6, 1],
            [_b64("Beta"), _b64("Delta"), 0.8, 3],
            [_b64("Echo"), _b64("Zulu"), 1.0, 40],
        ],
        "sampling-rate": 1.0,
        "histogram-type": "equi-height",
        "data-type": "string",
    }
    profile = mysql_column(histogram, values=50)
    assert profile.distinct == 44 and profile.values == ("Alpha",) and not profile.complete
