"""One uploaded file into DuckDB tables: the loader that reads it, held to the deterministic bounds
(`SandboxLimits`: tables, rows, columns, cells, expanded bytes) before and while it reads.

Loading is code, never model-written SQL: file paths go in as parameters, names as quoted
identifiers, and the loader's connection may read nothing but the one uploaded file (external
access off, `allowed_paths`, configuration locked). It runs in a child process under hard
limits (`load_bounded`); `Sandboxes` decides where each conversation's database lives and when it
goes.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from connectors.sandbox import csv_checks as sandbox_csv
from connectors.sandbox import sqlite as sandbox_sqlite
from connectors.sandbox.bounds import (
    MIB,
    SandboxLimits,
    too_expanded,
    too_long_value,
    too_many_cells,
    too_many_columns,
)
from connectors.sandbox.files import FileRejected, header_fields, identifier, is_utf8
from connectors.units import counted

#: DuckDB types whose values have no fixed width: measured for the expanded-bytes bound.
_MEASURED = {"VARCHAR": "strlen({})", "BLOB": "octet_length({})"}


@dataclass(frozen=True)
class LoadedTable:
    """A table a file became."""

    name: str
    source: str
    rows: int
    columns: int


def load_file(
    db: Path, file: Path, name: str, kind: str, limits: SandboxLimits, temp: Path
) -> list[LoadedTable]:
    """Load `file` (a `kind` upload called `name`) into the DuckDB database `db`, in one
    transaction on a connection of its own that may read nothing but that file, spilling to
    `temp` at most `limits.disk_bytes`. Meant for the bounded child process (`load_bounded`), which
    holds it to the memory and time limits and turns whatever it raises into a refusal
    (`unreadable`)."""
    con = duckdb.connect(
        str(db),
        config={
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "allow_community_extensions": False,
            "threads": 1,
            "memory_limit": f"{max(limits.memory_bytes // 2 // MIB, 1)}MiB",
            "temp_directory": str(temp),
            "max_temp_directory_size": f"{max(limits.disk_bytes // MIB, 1)}MiB",
        },
    )
    try:
        # The loader may read the one uploaded file and nothing else.
        con.execute("SET allowed_paths = ?", [[str(file)]])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        loader = _Loader(con, limits, name)
        con.execute("BEGIN")
        try:
            if kind == "sqlite":
                tables = loader.load_sqlite(file)
            else:
                tables = [loader.load_scan(file, kind)]
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        con.execute("CHECKPOINT")
        return tables
    finally:
        con.close()


class _Loader:
    """One load into an open transaction of the sandbox's loader connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection, limits: SandboxLimits, name: str) -> None:
        self.con = con
        self.limits = limits
        self.name = name
        existing = [
            table
            for (table,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE NOT internal"
            ).fetchall()
        ]
        self.taken = {t.lower() for t in existing}
        self.tables = len(existing)
        self.rows = sum(self._count(t) for t in existing)
        #: Keywords DuckDB does not take as a bare column name (`select`, `at`, `join`...).
        self.reserved = {
            k
            for (k,) in con.execute(
                "SELECT keyword_name FROM duckdb_keywords() "
                "WHERE keyword_category IN ('reserved', 'type_function')"
            ).fetchall()
        }
        self.loaded_at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        #: Whether a CSV is UTF-8 (else it is read as Latin-1), found out once per file.
        self._utf8: bool | None = None

    def load_scan(self, file: Path, kind: str) -> LoadedTable:
        """A CSV, Parquet or JSON file as one table, read by DuckDB's own readers."""
        self._check_table_slots(1)
        if kind == "csv":
            self.columns("", header_fields(file, utf8=self._is_utf8(file)))
        scan, params = self._scan(file, kind)
        described = self.con.execute(f"DESCRIBE SELECT * FROM {scan}", params).fetchall()
        self.columns("", len(described))
        if kind == "csv":
            sandbox_csv.check_shape(file, self.name, described, utf8=self._is_utf8(file))
        room = self.limits.max_rows - self.rows
        if kind == "parquet":
            self._check_parquet(file, scan, params, described, room)
        table = self._table_name(Path(self.name).stem)
        originals = [row[0] for row in described]
        columns = self._column_names(originals)
        # Times with a zone offset are kept in UTC without the zone: fetching TIMESTAMPTZ into
        # Python needs pytz, which the bot does not depend on.
        zoned = {row[0] for row in described if row[1] == "TIMESTAMP WITH TIME ZONE"}
        select = ", ".join(
            f"timezone('UTC', {_q(o)}) AS {_q(c)}" if o in zoned else f"{_q(o)} AS {_q(c)}"
            for o, c in zip(originals, columns, strict=True)
        )
        # Rows past either bound are not read: one more than fits says the file is over.
        fits = min(room, self.limits.max_cells // max(len(columns), 1))
        self.con.execute(
            f"CREATE TABLE {_q(table)} AS SELECT {select} FROM {scan} LIMIT ?",
            [*params, fits + 1],
        )
        rows = self._count(table)
        self._check_rows(rows, room)
        self.cells(rows * len(columns))
        self._check_values(table, columns, [row[1] for row in described])
        self._describe(table, originals, columns, f"the file {self.name}", utc=zoned)
        return self._loaded(table, rows, len(columns))

    def load_sqlite(self, file: Path) -> list[LoadedTable]:
        """Every ordinary table of a SQLite file, each as a table."""
        with sandbox_sqlite.open_upload(file, max_value_bytes=self.limits.max_file_bytes) as source:
            contents = sandbox_sqlite.read_contents(source, self, self.limits.max_expanded_bytes)
            if not contents.tables:
                raise FileRejected(
                    f"{self.name} has no tables to load.",
                    hint="Upload a SQLite file that holds tables (views are not read).",
                )
            self._check_table_slots(len(contents.tables))
            self._check_rows(sum(t.rows for t in contents.tables), self.limits.max_rows - self.rows)
            return [self._copy_sqlite_table(source, t) for t in contents.tables]

    def _copy_sqlite_table(self, source: Any, table: sandbox_sqlite.SqliteTable) -> LoadedTable:
        name = self._table_name(table.name)
        originals = [c.name for c in table.columns]
        columns = self._column_names(originals)
        definition = ", ".join(
            f"{_q(n)} {c.duck_type}" for n, c in zip(columns, table.columns, strict=True)
        )
        self.con.execute(f"CREATE TABLE {_q(name)} ({definition})")
        sandbox_sqlite.copy_table(source, table, self.con, _q(name), [_q(c) for c in columns])
        self._check_values(name, columns, [c.duck_type for c in table.columns])
        for new, column in zip(columns, table.columns, strict=True):
            self._sniff_date(name, new, column)
        self._describe(name, originals, columns, f"table {table.name} of the file {self.name}")
        return self._loaded(name, table.rows, len(columns))

    def _sniff_date(self, table: str, column: str, source: sandbox_sqlite.SqliteColumn) -> None:
        """A text column declared DATE/DATETIME/TIMESTAMP becomes one when every value casts."""
        target = sandbox_sqlite.date_type(source.declared)
        if target is None or source.duck_type != "VARCHAR":
            return
        bad = self._value(
            f"SELECT count(*) FROM {_q(table)} "
            f"WHERE {_q(column)} IS NOT NULL AND TRY_CAST({_q(column)} AS {target}) IS NULL"
        )
        if bad == 0:
            self.con.execute(
                f"ALTER TABLE {_q(table)} ALTER COLUMN {_q(column)} SET DATA TYPE {target}"
            )

    def _scan(self, file: Path, kind: str) -> tuple[str, list[Any]]:
        if kind == "parquet":
            return "read_parquet(?)", [str(file)]
        if kind == "json":
            return "read_json_auto(?)", [str(file)]
        return sandbox_csv.scan(file, utf8=self._is_utf8(file))

    def _is_utf8(self, file: Path) -> bool:
        if self._utf8 is None:
            self._utf8 = is_utf8(file)
        return self._utf8

    def _check_parquet(
        self, file: Path, scan: str, params: list[Any], described: list[Any], room: int
    ) -> None:
        """Rows and cells from the file's metadata, then the bytes its values expand to,
        measured by a streaming scan before anything is stored: a dictionary page holds each
        distinct value once, however many rows repeat it."""
        rows = self._value("SELECT num_rows FROM parquet_file_metadata(?)", [str(file)])
        self._check_rows(rows, room)
        self.cells(rows * len(described))
        measured = []
        fixed = 0
        for column, kind, *_ in described:
            size = _measure(column, kind)
            if size is None:
                fixed += 8
            else:
                measured.append(size)
        sizes = " + ".join(f"coalesce(sum({m}), 0)" for m in measured) or "0"
        size = self._value(f"SELECT {sizes} FROM {scan}", params)
        self.expanded(int(size) + rows * fixed)

    # -- bounds (sandbox_sqlite.Checks) --------------------------------------------------------

    def columns(self, table: str, count: int) -> None:
        if count > self.limits.max_columns:
            where = f" (table {table})" if table else ""
            raise too_many_columns(self.name, count, self.limits, where)

    def cells(self, total: int) -> None:
        if total > self.limits.max_cells:
            raise too_many_cells(self.name, self.limits)

    def expanded(self, total: int | None, what: str = "") -> None:
        if total is None or total > self.limits.max_expanded_bytes:
            raise too_expanded(self.name, total, self.limits, what)

    def _check_values(self, table: str, columns: list[str], kinds: list[str]) -> None:
        """No value of the new table longer than `max_field_bytes`, measured once stored: a
        longer one could never be shown (it is the bound on one value of a result), and DuckDB's
        readers have no bound of their own on one value."""
        sizes = [(c, m) for c, k in zip(columns, kinds, strict=True) if (m := _measure(c, k))]
        if not sizes:
            return
        longest = ", ".join(f"max({m})" for _, m in sizes)
        found = self.con.execute(f"SELECT {longest} FROM {_q(table)}").fetchone() or ()
        for (column, _), size in zip(sizes, found, strict=True):
            if size is not None and size > self.limits.max_field_bytes:
                raise too_long_value(self.name, int(size), self.limits, f" (column {column})")

    def _check_table_slots(self, count: int) -> None:
        if self.tables + count > self.limits.max_tables:
            left = self.limits.max_tables - self.tables
            raise FileRejected(
                f"{self.name} would add {counted(count, 'table')}, but this conversation "
                f"has room for {max(left, 0)} more (at most {self.limits.max_tables}).",
                hint="Start a new conversation for more files.",
                bound="tables",
            )

    def _check_rows(self, rows: int, room: int) -> None:
        if rows > room:
            total = self.limits.max_rows
            raise FileRejected(
                f"{self.name} has more rows than fit: a conversation holds at most "
                f"{total:,} rows in all"
                + (f" and {total - room:,} are taken." if room < total else "."),
                hint="Upload a smaller extract (filter or aggregate it first).",
                bound="rows",
            )

    def _count(self, table: str) -> int:
        return int(self._value(f"SELECT count(*) FROM {_q(table)}"))

    def _value(self, sql: str, params: object = None) -> Any:
        """The one value of a query that returns one row (a count, a sum, a file's metadata)."""
        row = self.con.execute(sql, params).fetchone()
        if row is None:  # never for these queries: an aggregate's or a file's one row
            raise ValueError(f"No row from: {sql}")
        return row[0]

    def _describe(
        self,
        table: str,
        originals: list[str],
        columns: list[str],
        origin: str,
        *,
        utc: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Table and column comments saying where the data came from (`utc`: original names of
        columns whose times were converted to UTC)."""
        self.con.execute(
            f"COMMENT ON TABLE {_q(table)} IS {_lit(f'Loaded from {origin} on {self.loaded_at}.')}"
        )
        for original, column in zip(originals, columns, strict=True):
            text = f'Column "{original}" of {origin}.'
            if original in utc:
                text += " Times in UTC."
            self.con.execute(f"COMMENT ON COLUMN {_q(table)}.{_q(column)} IS {_lit(text)}")

    def _loaded(self, table: str, rows: int, columns: int) -> LoadedTable:
        self.taken.add(table.lower())
        self.tables += 1
        self.rows += rows
        return LoadedTable(name=table, source=self.name, rows=rows, columns=columns)

    def _table_name(self, text: str) -> str:
        base = identifier(text, fallback="file", reserved=self.reserved)
        return _unique(base, self.taken)

    def _column_names(self, originals: list[str]) -> list[str]:
        taken: set[str] = set()
        names = []
        for original in originals:
            name = _unique(identifier(original, fallback="column", reserved=self.reserved), taken)
            taken.add(name)
            names.append(name)
        return names


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _measure(column: str, kind: str) -> str | None:
    """The SQL for the bytes a value of `column` (of DuckDB type `kind`) takes, None for a
    fixed-width type."""
    if kind in _MEASURED:
        return _MEASURED[kind].format(_q(column))
    if kind.endswith("]") or kind.startswith(("STRUCT", "MAP", "UNION")):
        return f"strlen(CAST({_q(column)} AS VARCHAR))"
    return None


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("\x00", "").replace("'", "''") + "'"
