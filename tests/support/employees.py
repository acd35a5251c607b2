"""An employees-like sample database (after MySQL's `employees` sample), generated
deterministically and loaded into PostgreSQL, MariaDB and a SQLite file.

The five tables of the original (departments, employees, dept_emp, titles, salaries; current rows
end on 9999-01-01) with table and column comments where the engine stores them. The generator is
seeded, so every load holds the same rows, and the questions' expected answers are computed here
in Python from those rows, independently of any engine.

Each loader creates its own database (or file) and a login holding only SELECT, set up the way
docs/warehouses.md tells a team to: PostgreSQL `GRANT SELECT` plus `default_transaction_read_only`,
MariaDB `GRANT SELECT` with no FILE or SUPER. Everything is dropped afterwards.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import sqlglot

from tests.support.sql_fixtures import (
    HOST,
    MYSQL_PORT,
    PG_PORT,
    bound_temp_files,
    mysql_connect,
    pg_connect,
    port_open,
    require,
    unique_name,
)

CURRENT = date(9999, 1, 1)
SEED = 10001
EMPLOYEE_COUNT = 300

DEPARTMENTS = [
    ("d001", "Marketing"),
    ("d002", "Finance"),
    ("d003", "Human Resources"),
    ("d004", "Production"),
    ("d005", "Development"),
    ("d006", "Quality Management"),
    ("d007", "Sales"),
    ("d008", "Research"),
    ("d009", "Customer Service"),
]
TITLES = ["Staff", "Senior Staff", "Engineer", "Senior Engineer", "Assistant Engineer"]
FIRST = ["Georgi", "Bezalel", "Parto", "Chirstian", "Kyoichi", "Anneke", "Tzvetan", "Saniya"]
LAST = ["Facello", "Simmel", "Bamford", "Koblick", "Maliniak", "Preusig", "Zielinski", "Peac"]

#: (table, comment, [(column, type, comment)]): types are written for PostgreSQL and MariaDB;
#: SQLite takes them as declared affinities.
SCHEMA: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    (
        "departments",
        "One row per department",
        [("dept_no", "CHAR(4)", "Department code, d001 to d009"), ("dept_name", "VARCHAR(40)", "")],
    ),
    (
        "employees",
        "One row per person ever employed",
        [
            ("emp_no", "INTEGER", "Employee number"),
            ("birth_date", "DATE", ""),
            ("first_name", "VARCHAR(14)", ""),
            ("last_name", "VARCHAR(16)", ""),
            ("gender", "CHAR(1)", "M or F"),
            ("hire_date", "DATE", "First day of work"),
        ],
    ),
    (
        "dept_emp",
        "Which department each employee belonged to, and when",
        [
            ("emp_no", "INTEGER", ""),
            ("dept_no", "CHAR(4)", ""),
            ("from_date", "DATE", ""),
            ("to_date", "DATE", "9999-01-01 while the assignment is current"),
        ],
    ),
    (
        "titles",
        "Job titles held by each employee over time",
        [
            ("emp_no", "INTEGER", ""),
            ("title", "VARCHAR(50)", ""),
            ("from_date", "DATE", ""),
            ("to_date", "DATE", "9999-01-01 while the title is current"),
        ],
    ),
    (
        "salaries",
        "Salary history: one row per employee and pay period",
        [
            ("emp_no", "INTEGER", ""),
            ("salary", "INTEGER", "Yearly salary in USD"),
            ("from_date", "DATE", ""),
            ("to_date", "DATE", "9999-01-01 for the current salary"),
        ],
    ),
]
TABLES = tuple(table for table, _, _ in SCHEMA)
TABLE_COMMENTS = {table: comment for table, comment, _ in SCHEMA}
COLUMN_COMMENTS = {(t, c): text for t, _, cols in SCHEMA for c, _, text in cols if text}

Row = tuple[Any, ...]


def generate() -> dict[str, list[Row]]:
    """Every table's rows, the same on every call."""
    rng = random.Random(SEED)
    rows: dict[str, list[Row]] = {"departments": list(DEPARTMENTS)}
    employees, dept_emp, titles, salaries = [], [], [], []
    for i in range(EMPLOYEE_COUNT):
        emp_no = 10001 + i
        hired = date(2015, 1, 1) + timedelta(days=rng.randrange(3000))
        born = date(1960, 1, 1) + timedelta(days=rng.randrange(12000))
        employees.append(
            (emp_no, born, rng.choice(FIRST), rng.choice(LAST), rng.choice("MF"), hired)
        )
        left = rng.random() < 0.1  # one in ten has left: no current rows
        first_dept = rng.choice(DEPARTMENTS)[0]
        moved = hired + timedelta(days=rng.randrange(200, 900)) if rng.random() < 0.3 else None
        end = hired + timedelta(days=rng.randrange(900, 1500)) if left else CURRENT
        if moved and moved < end:
            dept_emp.append((emp_no, first_dept, hired, moved))
            second = rng.choice([d for d, _ in DEPARTMENTS if d != first_dept])
            dept_emp.append((emp_no, second, moved, end))
        else:
            dept_emp.append((emp_no, first_dept, hired, end))
        title = rng.choice(TITLES[:3])
        promoted = hired + timedelta(days=rng.randrange(400, 1200))
        if promoted < end and title in ("Staff", "Engineer") and rng.random() < 0.6:
            titles.append((emp_no, title, hired, promoted))
            titles.append((emp_no, f"Senior {title}", promoted, end))
        else:
            titles.append((emp_no, title, hired, end))
        salary = 40000 + rng.randrange(0, 30000, 10)
        start = hired
        while True:
            stop = start + timedelta(days=365)
            if stop >= end or (end == CURRENT and stop > date(2026, 1, 1)):
                salaries.append((emp_no, salary, start, end))
                break
            salaries.append((emp_no, salary, start, stop))
            salary += rng.randrange(0, 4000, 10)
            start = stop
    rows |= {"employees": employees, "dept_emp": dept_emp, "titles": titles, "salaries": salaries}
    return rows


DATA = generate()


# -- questions, their SQL and their answers computed from DATA ---------------------------------


@dataclass(frozen=True)
class Question:
    text: str
    #: PostgreSQL SQL, unqualified table names; `sql(dialect)` transpiles it with sqlglot.
    postgres: str
    #: The answer's rows in order, computed from DATA in Python.
    expected: Callable[[], list[Row]]
    #: Dialect -> SQL written by hand where sqlglot has no translation (SQLite lacks EXTRACT).
    written: dict[str, str] = field(default_factory=dict)

    def sql(self, dialect: str) -> str:
        if dialect == "postgres":
            return self.postgres
        if dialect in self.written:
            return self.written[dialect]
        return sqlglot.transpile(self.postgres, read="postgres", write=dialect)[0]


def _current(table: str) -> list[Row]:
    return [row for row in DATA[table] if row[-1] == CURRENT]


def _headcount() -> list[Row]:
    names = dict(DEPARTMENTS)
    counts = Counter(names[dept] for _, dept, _, _ in _current("dept_emp"))
    return sorted(counts.items())


def _average_salary_by_title() -> list[Row]:
    salary = {emp: s for emp, s, _, _ in _current("salaries")}
    by_title: dict[str, list[int]] = defaultdict(list)
    for emp, title, _, _ in _current("titles"):
        by_title[title].append(salary[emp])
    return sorted((t, round(sum(v) / len(v), 2)) for t, v in by_title.items())


def _top_paid() -> list[Row]:
    names = {e[0]: (e[2], e[3]) for e in DATA["employees"]}
    ranked = sorted(_current("salaries"), key=lambda r: (-r[1], r[0]))[:5]
    return [(emp, *names[emp], salary) for emp, salary, _, _ in ranked]


def _hires_per_year() -> list[Row]:
    return sorted(Counter(e[5].year for e in DATA["employees"]).items())


QUESTIONS = [
    Question(
        "How many people work in each department now?",
        "SELECT d.dept_name, COUNT(*) AS headcount FROM dept_emp AS de"
        " JOIN departments AS d ON d.dept_no = de.dept_no"
        " WHERE de.to_date = DATE '9999-01-01' GROUP BY d.dept_name ORDER BY d.dept_name",
        _headcount,
    ),
    Question(
        "What is the average current salary per title?",
        "SELECT t.title, ROUND(AVG(s.salary), 2) AS average_salary FROM titles AS t"
        " JOIN salaries AS s ON s.emp_no = t.emp_no"
        " WHERE t.to_date = DATE '9999-01-01' AND s.to_date = DATE '9999-01-01'"
        " GROUP BY t.title ORDER BY t.title",
        _average_salary_by_title,
    ),
    Question(
        "Who are the five best-paid current employees?",
        "SELECT e.emp_no, e.first_name, e.last_name, s.salary FROM employees AS e"
        " JOIN salaries AS s ON s.emp_no = e.emp_no WHERE s.to_date = DATE '9999-01-01'"
        " ORDER BY s.salary DESC, e.emp_no LIMIT 5",
        _top_paid,
    ),
    Question(
        "How many people were hired each year?",
        "SELECT EXTRACT(YEAR FROM hire_date) AS year, COUNT(*) AS hires FROM employees"
        " GROUP BY EXTRACT(YEAR FROM hire_date) ORDER BY year",
        _hires_per_year,
        {
            "sqlite": "SELECT CAST(strftime('%Y', hire_date) AS INTEGER) AS year,"
            " COUNT(*) AS hires FROM employees GROUP BY year ORDER BY year"
        },
    ),
]


# -- loading -------------------------------------------------------------------------------------


def ddl(dialect: str, schema: str | None = None) -> list[str]:
    """CREATE TABLE statements (with inline COMMENTs for MySQL), then PostgreSQL's COMMENT ONs."""
    prefix = f"{schema}." if schema else ""
    statements, comments = [], []
    for table, comment, columns in SCHEMA:
        parts = []
        for column, type_, text in columns:
            inline = f" COMMENT '{text}'" if dialect == "mysql" and text else ""
            parts.append(f"{column} {type_} NOT NULL{inline}")
            if dialect == "postgres" and text:
                comments.append(f"COMMENT ON COLUMN {prefix}{table}.{column} IS '{text}'")
        table_comment = f" COMMENT='{comment}'" if dialect == "mysql" else ""
        statements.append(f"CREATE TABLE {prefix}{table} ({', '.join(parts)}){table_comment}")
        if dialect == "postgres":
            comments.append(f"COMMENT ON TABLE {prefix}{table} IS '{comment}'")
    return statements + comments


def insert(cursor: Any, dialect: str, schema: str | None = None) -> None:
    """Every row through a DB-API cursor (sqlite3 gets ISO text dates)."""
    prefix = f"{schema}." if schema else ""
    mark = "?" if dialect == "sqlite" else "%s"
    for table in TABLES:
        rows = DATA[table]
        if dialect == "sqlite":
            rows = [tuple(v.isoformat() if isinstance(v, date) else v for v in r) for r in rows]
        marks = ", ".join([mark] * len(rows[0]))
        cursor.executemany(f"INSERT INTO {prefix}{table} VALUES ({marks})", rows)


@dataclass(frozen=True)
class Loaded:
    """A loaded employees database: the read-only URL and how its tables are qualified."""

    dialect: str
    url: str
    #: `hr` (PostgreSQL schema), the MariaDB database, or `main` (SQLite).
    schema: str


@contextmanager
def postgres_employees() -> Iterator[Loaded]:
    """Database `querybot_test_<hex>`, schema `hr`; login `<name>_ro` with SELECT only."""
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}:{PG_PORT}")
    name = unique_name()
    login = f"{name}_ro"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE DATABASE {name}")
        try:
            server.execute(f"CREATE ROLE {login} LOGIN")
            bound_temp_files(server, login)
            server.execute(f"ALTER ROLE {login} SET default_transaction_read_only = on")
            with pg_connect(name) as admin:
                admin.execute("CREATE SCHEMA hr")
                for statement in ddl("postgres", "hr"):
                    admin.execute(statement)
                with admin.cursor() as cur:
                    insert(cur, "postgres", "hr")
                admin.execute(f"GRANT USAGE ON SCHEMA hr TO {login}")
                admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA hr TO {login}")
                admin.execute(f"ALTER ROLE {login} IN DATABASE {name} SET search_path = hr")
                admin.execute("ANALYZE")
            yield Loaded("postgres", f"postgresql://{login}@{HOST}:{PG_PORT}/{name}", "hr")
        finally:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {login}")


@contextmanager
def mariadb_employees() -> Iterator[Loaded]:
    """Database `querybot_test_<hex>`; user `<name>` with SELECT on it only."""
    require(port_open(MYSQL_PORT), f"MariaDB is not reachable at {HOST}:{MYSQL_PORT}")
    name = unique_name()
    admin = mysql_connect()
    cur = admin.cursor()
    cur.execute(f"CREATE DATABASE {name}")
    try:
        for statement in ddl("mysql", name):
            cur.execute(statement)
        insert(cur, "mysql", name)
        cur.execute(f"CREATE USER '{name}'@'%' IDENTIFIED BY 'employees-ro'")
        cur.execute(f"GRANT SELECT ON {name}.* TO '{name}'@'%'")
        yield Loaded("mysql", f"mysql://{name}:employees-ro@{HOST}:{MYSQL_PORT}/{name}", name)
    finally:
        cur.execute(f"DROP DATABASE IF EXISTS {name}")
        cur.execute(f"DROP USER IF EXISTS '{name}'@'%'")
        admin.close()


def sqlite_employees(path: Path) -> Loaded:
    """`path` as a SQLite file holding the sample (SQLite keeps no comments)."""
    con = sqlite3.connect(path)
    with con:
        for statement in ddl("sqlite"):
            con.execute(statement)
        insert(con.cursor(), "sqlite")
    con.close()
    return Loaded("sqlite", f"sqlite:///{path}", "main")
