"""The employees sample in PostgreSQL, MariaDB and SQLite through SqlConnector, each opened as
the SELECT-only login docs/warehouses.md recommends: the metadata carries the comments the engine
stores, and the sample questions' SQL (transpiled by sqlglot) returns the answers computed in
Python from the generated rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.evaluation.compare import Table, compare
from connectors.base import PermissionDenied
from connectors.sql.connector import SqlConnector
from tests.support import employees
from tests.support.employees import DATA, QUESTIONS, Loaded, Question

ENGINES = ("postgres", "mysql", "sqlite")


@pytest.fixture(scope="module", params=ENGINES)
def loaded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Loaded]:
    if request.param == "postgres":
        with employees.postgres_employees() as db:
            yield db
    elif request.param == "mysql":
        with employees.mariadb_employees() as db:
            yield db
    else:
        yield employees.sqlite_employees(tmp_path_factory.mktemp("employees") / "employees.db")


@pytest.fixture(scope="module")
def connector(loaded: Loaded) -> Iterator[SqlConnector]:
    opened = SqlConnector(loaded.url)
    yield opened
    opened.close()


def test_lists_the_five_tables_with_their_columns(loaded: Loaded, connector: SqlConnector) -> None:
    tables = {t.name: t for t in connector.list_tables()}
    assert sorted(tables) == sorted(f"{loaded.schema}.{t}" for t in employees.TABLES)
    for table, _, columns in employees.SCHEMA:
        info = tables[f"{loaded.schema}.{table}"]
        assert [c.name for c in info.columns] == [c for c, _, _ in columns]
    assert tables[f"{loaded.schema}.salaries"].columns[1].type.lower().startswith("int")


def test_metadata_shows_the_comments(loaded: Loaded, connector: SqlConnector) -> None:
    tables = {t.short_name: t for t in connector.list_tables()}
    found = {t: info.description for t, info in tables.items()}
    columns = {(t, c.name): c.description for t, info in tables.items() for c in info.columns}
    if loaded.dialect == "sqlite":  # SQLite stores no comments
        assert set(found.values()) == {""} and set(columns.values()) == {""}
        return
    assert found == employees.TABLE_COMMENTS
    assert {k: v for k, v in columns.items() if v} == employees.COLUMN_COMMENTS
    assert connector.describe("salaries").columns[1].description == "Yearly salary in USD"


def test_row_counts(loaded: Loaded, connector: SqlConnector) -> None:
    counts = {t.short_name: t.row_count for t in connector.list_tables()}
    if loaded.dialect == "mysql":  # InnoDB's TABLE_ROWS is an estimate
        assert all(c is not None for c in counts.values())
        return
    assert counts == {t: len(DATA[t]) for t in employees.TABLES}


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.text)
def test_question_sql_returns_the_computed_answer(
    loaded: Loaded, connector: SqlConnector, question: Question
) -> None:
    sql = question.sql(loaded.dialect)
    result = connector.run(sql, max_rows=1000, timeout_s=10)
    expected = question.expected()
    assert result.total_rows == len(expected)
    got = Table(tuple(result.columns), tuple(result.rows))
    want = Table(tuple(result.columns), tuple(expected))
    assert compare(want, got, ordered=True) == "exact", (sql, result.rows[:5], expected[:5])


def test_the_select_only_login_cannot_write(loaded: Loaded, connector: SqlConnector) -> None:
    with pytest.raises(PermissionDenied):
        connector.run("DELETE FROM salaries", max_rows=1, timeout_s=5)
    result = connector.run("SELECT COUNT(*) FROM salaries", max_rows=1, timeout_s=5)
    assert result.rows == [(len(DATA["salaries"]),)]


def test_generator_is_deterministic() -> None:
    assert employees.generate() == DATA
    assert len(DATA["employees"]) == employees.EMPLOYEE_COUNT
    current = [r for r in DATA["dept_emp"] if r[-1] == employees.CURRENT]
    assert 0.8 * len(DATA["employees"]) < len(current) < len(DATA["employees"])


def test_sqlite_file_is_not_changed_by_the_connector(tmp_path: Path) -> None:
    loaded = employees.sqlite_employees(tmp_path / "e.db")
    before = (tmp_path / "e.db").read_bytes()
    opened = SqlConnector(loaded.url)
    try:
        for question in QUESTIONS:
            opened.run(question.sql("sqlite"), max_rows=10, timeout_s=5)
    finally:
        opened.close()
    assert (tmp_path / "e.db").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.db"]
