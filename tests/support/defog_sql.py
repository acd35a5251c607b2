"""sql-eval's gold SQL for PostgreSQL, MySQL and SQLite, run through `SqlConnector` and compared
with the same question's PostgreSQL gold on DuckDB.

The reference is each defog-data database loaded into DuckDB by `agent.evaluation.defog`
(the loader `querybot eval` and the benchmarks use). Its rows are then copied, value for value,
into PostgreSQL (one schema per database), MariaDB (one database each) and SQLite (one file
each), so every engine holds the very same values: the dumps compute dates from `NOW()` at load
time, and loading each engine from the dump separately would let them drift apart.

The dialect's gold SQL (its first acceptable answer) runs through the connector as a
SELECT-only login; the PostgreSQL gold alternatives run on DuckDB (as written, else transpiled
by sqlglot); the two are compared as sql-eval does (`agent.evaluation.compare`). A difference
is described by loosening the comparison step by step (order, rounding, case), and must be
written down for its question in `KNOWN` with what the comparison reports and why, so a new
difference (even one only in the decimals) is never explained away.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import sqlglot

from agent.evaluation.compare import Table, best_match, norm
from agent.evaluation.defog import CORPORA, Gold, build_defog, databases, gold_questions
from connectors.base import ConnectorError
from connectors.sql.connector import SqlConnector
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

DIALECTS = ("postgres", "mysql", "sqlite")
TIMEOUT_S = 20.0

#: DuckDB column type -> the type each engine gets (DECIMAL(p,s) keeps its arguments).
_TYPES = {
    "postgres": {"DOUBLE": "DOUBLE PRECISION", "FLOAT": "REAL", "VARCHAR": "TEXT"},
    "mysql": {"VARCHAR": "TEXT", "TIMESTAMP": "DATETIME(6)", "TIME": "TIME(6)"},
    "sqlite": {"VARCHAR": "TEXT", "BIGINT": "INTEGER", "DOUBLE": "REAL", "FLOAT": "REAL"},
}


# -- the reference and the copies ---------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class SourceTable:
    """A table of the DuckDB reference: where the dump put it, its columns and rows."""

    schema: str
    name: str
    columns: tuple[Column, ...]
    rows: list[tuple[Any, ...]]


def reference(database: str, cache: Path) -> Path:
    """The DuckDB file of `database` (built once into `cache`)."""
    return build_defog(database, cache / f"{database}.duckdb")


def source_tables(path: Path) -> list[SourceTable]:
    with duckdb.connect(str(path), read_only=True) as con:
        names = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() ORDER BY 1, 2"
        ).fetchall()
        tables = []
        for schema, table in names:
            columns = con.execute(
                "SELECT column_name, data_type FROM duckdb_columns()"
                " WHERE schema_name = ? AND table_name = ? ORDER BY column_index",
                [schema, table],
            ).fetchall()
            rows = con.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()
            tables.append(SourceTable(schema, table, tuple(Column(*c) for c in columns), rows))
    return tables


def _type(dialect: str, duck: str) -> str:
    return _TYPES[dialect].get(duck, duck)


def _create(dialect: str, qualified: str, table: SourceTable) -> str:
    quote = "`" if dialect == "mysql" else '"'
    columns = ", ".join(
        f"{quote}{_name(dialect, c.name)}{quote} {_type(dialect, c.type)}" for c in table.columns
    )
    return f"CREATE TABLE {qualified} ({columns})"


def _name(dialect: str, name: str) -> str:
    """PostgreSQL folds the dumps' unquoted mixed-case names (`sbTransaction`) to lower case."""
    return name.lower() if dialect == "postgres" else name


def _sqlite_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


@dataclass
class Loaded:
    """Every defog database in one engine, and a connector per database."""

    dialect: str
    connectors: dict[str, SqlConnector] = field(default_factory=dict)
    #: Seconds spent copying the rows in.
    load_s: float = 0.0

    def close(self) -> None:
        for connector in self.connectors.values():
            connector.close()


def _schema(database: str, table: SourceTable) -> str:
    """The PostgreSQL schema: the dump's own (ewallet's `consumer_div`), else the database."""
    return table.schema if table.schema != "main" else database


@contextmanager
def load_postgres(sources: dict[str, list[SourceTable]]) -> Iterator[Loaded]:
    """One database, a schema per defog database, a login with `pg_read_all_data` whose
    `search_path` the connector URL points at that schema."""
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}:{PG_PORT}")
    name = unique_name()
    loaded = Loaded("postgres")
    with pg_connect("postgres") as server:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {name} LOGIN")
        bound_temp_files(server, name)
        server.execute(f"GRANT pg_read_all_data TO {name}")
        try:
            started = time.perf_counter()
            with pg_connect(name) as admin:
                for database, tables in sources.items():
                    for table in tables:
                        schema = _schema(database, table)
                        admin.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                        target = f'"{schema}"."{_name("postgres", table.name)}"'
                        admin.execute(_create("postgres", target, table))
                        with admin.cursor() as cur, cur.copy(f"COPY {target} FROM STDIN") as copy:
                            for row in table.rows:
                                copy.write_row(row)
                admin.execute("ANALYZE")
            loaded.load_s = time.perf_counter() - started
            for database, tables in sources.items():
                schema = _schema(database, tables[0])
                url = f"postgresql://{name}@{HOST}:{PG_PORT}/{name}"
                loaded.connectors[database] = SqlConnector(
                    f"{url}?options=-c%20search_path%3D{schema}", pool_size=1
                )
            yield loaded
        finally:
            loaded.close()
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {name}")


@contextmanager
def load_mariadb(sources: dict[str, list[SourceTable]]) -> Iterator[Loaded]:
    """A database per defog database, named as it (the MySQL gold qualifies some tables with
    it: `broker.sbCustomer`), and a user with SELECT on them only. A server-wide named lock
    keeps two test sessions from loading at once; a database of that name that this session
    did not create stops the run rather than being dropped."""
    require(port_open(MYSQL_PORT), f"MariaDB is not reachable at {HOST}:{MYSQL_PORT}")
    prefix = unique_name()
    loaded = Loaded("mysql")
    admin = mysql_connect()
    cur = admin.cursor()
    cur.execute("SELECT GET_LOCK('querybot_defog', 300)")
    created: list[str] = []
    try:
        cur.execute("SHOW DATABASES")
        taken = sorted(set(sources) & {r[0] for r in cur.fetchall()})
        require(not taken, f"MariaDB already holds databases named {taken}; drop them first")
        cur.execute(f"CREATE USER '{prefix}'@'%' IDENTIFIED BY 'defog-ro'")
        started = time.perf_counter()
        for database, tables in sources.items():
            schema = database
            cur.execute(f"CREATE DATABASE {schema}")
            created.append(schema)
            for table in tables:
                target = f"{schema}.`{table.name}`"
                cur.execute(_create("mysql", target, table))
                if table.rows:
                    marks = ", ".join(["%s"] * len(table.columns))
                    cur.executemany(f"INSERT INTO {target} VALUES ({marks})", table.rows)
            cur.execute(f"GRANT SELECT ON {schema}.* TO '{prefix}'@'%'")
        loaded.load_s = time.perf_counter() - started
        for database in sources:
            loaded.connectors[database] = SqlConnector(
                f"mysql://{prefix}:defog-ro@{HOST}:{MYSQL_PORT}/{database}", pool_size=1
            )
        yield loaded
    finally:
        loaded.close()
        for database in created:
            cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"DROP USER IF EXISTS '{prefix}'@'%'")
        admin.close()  # releases the lock


@contextmanager
def load_sqlite(sources: dict[str, list[SourceTable]], folder: Path) -> Iterator[Loaded]:
    """A file per defog database in `folder`; dates and times as ISO text, as SQLite keeps them."""
    loaded = Loaded("sqlite")
    started = time.perf_counter()
    for database, tables in sources.items():
        path = folder / f"{database}.sqlite"
        con = sqlite3.connect(path)
        with con:
            for table in tables:
                con.execute(_create("sqlite", f'"{table.name}"', table))
                if table.rows:
                    marks = ", ".join("?" * len(table.columns))
                    rows = [tuple(_sqlite_value(v) for v in row) for row in table.rows]
                    con.executemany(f'INSERT INTO "{table.name}" VALUES ({marks})', rows)
        con.close()
    loaded.load_s = time.perf_counter() - started
    try:
        for database in sources:
            loaded.connectors[database] = SqlConnector(
                f"sqlite:///{folder / f'{database}.sqlite'}", pool_size=1
            )
        yield loaded
    finally:
        loaded.close()


@contextmanager
def load(dialect: str, sources: dict[str, list[SourceTable]], folder: Path) -> Iterator[Loaded]:
    if dialect == "postgres":
        with load_postgres(sources) as loaded:
            yield loaded
    elif dialect == "mysql":
        with load_mariadb(sources) as loaded:
            yield loaded
    else:
        with load_sqlite(sources, folder) as loaded:
            yield loaded


# -- questions and comparison -------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One sql-eval question: its gold SQL in the dialect, and its PostgreSQL gold."""

    dialect: Gold
    postgres: Gold

    @property
    def ordered(self) -> bool:
        return self.dialect.category == "order_by"


def pairs(dialect: str, corpora: Path = CORPORA) -> list[Pair]:
    """The dialect's questions matched to the PostgreSQL file's on database and question."""
    postgres = {(g.database, g.question): g for g in gold_questions(corpora, "postgres")}
    found = []
    for gold in gold_questions(corpora, dialect):
        other = postgres.get((gold.database, gold.question))
        if other is not None and gold.queries:
            found.append(Pair(gold, other))
    return found


def sample(found: list[Pair], per_database: int) -> list[Pair]:
    """The first `per_database` questions of each database (a spread over every schema)."""
    kept: Counter[str] = Counter()
    out = []
    for pair in found:
        if kept[pair.dialect.database] < per_database:
            kept[pair.dialect.database] += 1
            out.append(pair)
    return out


def duckdb_gold(con: duckdb.DuckDBPyConnection, gold: Gold) -> list[Table]:
    """Each PostgreSQL gold alternative's result on DuckDB (as written, else transpiled)."""
    tables = []
    for sql in gold.queries:
        candidates = [sql]
        with contextlib.suppress(sqlglot.errors.SqlglotError):
            candidates.append(sqlglot.transpile(sql, read="postgres", write="duckdb")[0])
        for candidate in candidates:
            try:
                cursor = con.execute(_without_time_zones(con, candidate))
            except duckdb.Error:
                continue
            columns = tuple(d[0] for d in cursor.description or ())
            tables.append(Table(columns, tuple(cursor.fetchall())))
            break
    return tables


def _without_time_zones(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """`sql` with its TIMESTAMP WITH TIME ZONE columns (from `NOW()`) cast to UTC timestamps:
    DuckDB's Python client needs pytz to fetch them, and PostgreSQL here runs in UTC too."""
    described = con.execute(f"DESCRIBE {sql}").fetchall()
    zoned = [name for name, type_, *_ in described if type_ == "TIMESTAMP WITH TIME ZONE"]
    if not zoned:
        return sql
    casts = ", ".join(f'CAST("{c}" AS TIMESTAMP) AS "{c}"' for c in zoned)
    return f"SELECT * REPLACE ({casts}) FROM ({sql})"


@dataclass
class Outcome:
    pair: Pair
    sql: str
    #: "match", "differs" or "error" (the connector refused or failed the gold SQL).
    status: str
    reason: str = ""
    elapsed_s: float = 0.0


def explain(golds: list[Table], got: Table, *, ordered: bool) -> str:
    """What differs between `got` and the gold results: the first loosening under which they
    match, else the shape of the difference. It describes, it does not excuse: every
    difference must also be written down for its question in `KNOWN`."""
    if ordered and best_match(golds, got, ordered=False):
        return "order of tied rows"
    for digits, label in ((1, "float rounding at the 2nd decimal"), (0, "numbers apart by < 0.5")):
        loose = [_rounded(g, digits) for g in golds]
        if best_match(loose, _rounded(got, digits), ordered=False):
            return label
    folded = [_folded(g) for g in golds]
    if best_match(folded, _folded(got), ordered=False):
        return "text case or spacing"
    gold = golds[0]
    if len(got.rows) != len(gold.rows):
        return f"{len(got.rows)} rows where DuckDB has {len(gold.rows)}"
    if len(got.columns) != len(gold.columns):
        return f"{len(got.columns)} columns where DuckDB has {len(gold.columns)}"
    return "values differ"


def _rounded(table: Table, digits: int) -> Table:
    def value(v: Any) -> Any:
        v = norm(v)
        return round(v, digits) if isinstance(v, float) else v

    return Table(table.columns, tuple(tuple(value(v) for v in row) for row in table.rows))


def _folded(table: Table) -> Table:
    def value(v: Any) -> Any:
        return " ".join(v.lower().split()) if isinstance(v, str) else v

    return Table(table.columns, tuple(tuple(value(v) for v in row) for row in table.rows))


NO_REFERENCE = "PostgreSQL gold does not run on DuckDB"


@dataclass(frozen=True)
class Known:
    """One question's difference, read by hand: what the comparison reports (its reason, or a
    piece of the error) and why it is not the connector's doing."""

    found: str
    why: str


_ALIAS_IN_ORDER_BY = Known(
    "Reference '",
    "MariaDB refuses an aggregate's alias inside an ORDER BY expression (sqlglot's NULLS "
    "emulation, CASE WHEN alias IS NULL); MySQL 8 accepts it",
)
_FLOAT32 = Known(
    "float rounding at the 2nd decimal",
    "the PostgreSQL gold casts to `float`, 64-bit in PostgreSQL and 32-bit in DuckDB: a ratio "
    "at a rounding boundary rounds the other way on the reference",
)
_MYSQL_DATES = Known("values differ", "MySQL subtracts DATEs as YYYYMMDD numbers, not days")
_MYSQL_DATETIMES = Known("values differ", "MySQL subtracts DATETIMEs as YYYYMMDDhhmmss numbers")

#: Every difference, per question: (dialect, database, the question's opening words) -> what
#: the comparison reports and why. The gold files were written for MySQL 8 and PostgreSQL; the
#: reference is DuckDB. A difference not listed here, or reported otherwise, fails the test.
KNOWN: dict[tuple[str, str, str], Known] = {
    **{
        (dialect, database, question): entry
        for dialect in DIALECTS
        for database, question, entry in (
            (
                "atis",
                "What's the earliest flight departure time in the day in HH:MM?",
                Known(NO_REFERENCE, "DuckDB has no to_char(..., 'HH24:MI')"),
            ),
            (
                "yelp",
                "How many reviews were posted in each month of the year 2021",
                Known(NO_REFERENCE, "DuckDB has no TO_DATE(month, 'Month')"),
            ),
            ("atis", "What is the ratio of one-way trip costs to round-trip costs", _FLOAT32),
            ("atis", "What is the ratio of aircraft capacity to its range in miles", _FLOAT32),
        )
    },
    ("postgres", "broker", "Return the customer id and the difference between their time"): Known(
        "must appear in the GROUP BY",
        "the PostgreSQL gold itself is invalid (PostgreSQL 15 refuses it)",
    ),
    ("postgres", "yelp", "How many reviews were written for businesses located in California"): (
        Known('invalid value "Month"', "the PostgreSQL gold itself fails on PostgreSQL 15")
    ),
    ("mysql", "academic", "What are the top 5 domains with the highest number of authors"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "academic", "What is the total number of publications presented in each"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "advising", "What month were most students admitted?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "advising", "What is the name of the instructor who has taught the most"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "advising", "How many students have declared a major in each program?"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "atis", "What is the total cost of round-trip fares for each airline code?"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "geography", "How many rivers flow through each country?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "geography", "How many mountains are there in each country?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "geography", "How many lakes are there in each state?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "restaurants", "How many restaurants are there in each region?"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "scholar", "Which papers have the highest number of authors"): _ALIAS_IN_ORDER_BY,
    ("mysql", "scholar", "How many papers cite each paper in the dataset named"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "advising", "What's the average predicted time to graduation since"): _MYSQL_DATES,
    ("mysql", "car_dealership", "Return the name and phone number of the salesperson with"): (
        _MYSQL_DATES
    ),
    ("mysql", "atis", "What's the average duration between departure and arrival"): (
        _MYSQL_DATETIMES
    ),
    ("mysql", "ewallet", "what was the average user session duration in seconds"): (
        _MYSQL_DATETIMES
    ),
    ("sqlite", "broker", "Return the customer id and the difference between their time"): Known(
        "values differ",
        "SQLite gives the gap as fractional days (julianday), PostgreSQL as an INTERVAL",
    ),
    ("sqlite", "ewallet", "Which users did not get a notification within the first year"): Known(
        "values differ",
        "SQLite compares timestamps as text and date() drops the time of day, so BETWEEN keeps "
        "other rows",
    ),
}


def known(dialect: str, pair: Pair) -> Known | None:
    """The difference written down for this question, or None."""
    gold = pair.dialect
    return next(
        (
            entry
            for (d, database, opening), entry in KNOWN.items()
            if d == dialect and database == gold.database and gold.question.startswith(opening)
        ),
        None,
    )


def compare_pair(
    pair: Pair, connector: SqlConnector, reference_con: duckdb.DuckDBPyConnection
) -> Outcome:
    sql = pair.dialect.queries[0]
    started = time.perf_counter()
    try:
        result = connector.run(sql, max_rows=100_000, timeout_s=TIMEOUT_S)
    except ConnectorError as exc:
        return Outcome(pair, sql, "error", f"{type(exc).__name__}: {exc.message}")
    elapsed = time.perf_counter() - started
    golds = duckdb_gold(reference_con, pair.postgres)
    if not golds:
        return Outcome(pair, sql, "differs", NO_REFERENCE, elapsed)
    got = Table(tuple(result.columns), tuple(result.rows))
    if best_match(golds, got, ordered=pair.ordered):
        return Outcome(pair, sql, "match", "", elapsed)
    return Outcome(pair, sql, "differs", explain(golds, got, ordered=pair.ordered), elapsed)


@dataclass
class Report:
    dialect: str
    outcomes: list[Outcome]
    load_s: float

    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    def reasons(self) -> Counter[str]:
        """Why the non-matching questions did not match: the hand-written note where the
        comparison reports what was written down, else what it reports."""
        return Counter(self._note(o) or o.reason for o in self.outcomes if o.status != "match")

    def unexplained(self) -> list[Outcome]:
        """Differences not written down for their question, or reported otherwise."""
        return [o for o in self.outcomes if o.status != "match" and not self._note(o)]

    def stale(self) -> list[Outcome]:
        """Questions written down as differing that now match (their entry should go)."""
        return [o for o in self.outcomes if o.status == "match" and known(self.dialect, o.pair)]

    def _note(self, outcome: Outcome) -> str:
        entry = known(self.dialect, outcome.pair)
        return entry.why if entry is not None and entry.found in outcome.reason else ""

    def median_run_ms(self) -> float:
        times = [o.elapsed_s for o in self.outcomes if o.status != "error"]
        return 1000 * statistics.median(times) if times else 0.0

    def summary(self) -> str:
        counts = self.counts()
        ran = counts["match"] + counts["differs"]
        return (
            f"{self.dialect}: {len(self.outcomes)} questions, {ran} ran through SqlConnector, "
            f"{counts['match']} matched DuckDB, {counts['differs']} differ, "
            f"{counts['error']} failed; median run {self.median_run_ms():.1f} ms; "
            f"load {self.load_s:.1f} s"
        )


def evaluate(dialect: str, found: list[Pair], cache: Path) -> Report:
    """Load the databases `found` uses into `dialect`'s engine, run and compare every pair."""
    names = sorted({p.dialect.database for p in found} & set(databases()))
    files = {name: reference(name, cache) for name in names}
    sources = {name: source_tables(path) for name, path in files.items()}
    outcomes = []
    folder = Path(tempfile.mkdtemp(prefix=f"{dialect}-copies-", dir=cache))
    with load(dialect, sources, folder) as loaded:
        for name in names:
            with duckdb.connect(str(files[name]), read_only=True) as con:
                for pair in (p for p in found if p.dialect.database == name):
                    outcomes.append(compare_pair(pair, loaded.connectors[name], con))
        load_s = loaded.load_s
    return Report(dialect, outcomes, load_s)
