"""One uploaded file into DuckDB tables: what kind of file it is, the names its tables and
columns get, the limits it must keep, and the loader that reads it.

Loading is code, never model-written SQL: file paths go in as parameters, names as quoted
identifiers, and the loader's connection may read nothing but the one uploaded file (external
access off, `allowed_paths`, configuration locked). `connectors.sandbox` decides where each
conversation's database lives and when it goes.
"""

from __future__ import annotations

import codecs
import csv
import functools
import re
import sqlite3
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

from connectors import sandbox_sqlite
from connectors.base import ConnectorError

FORMATS = "CSV, Parquet, JSON or SQLite"

_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".tab": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".ndjson": "json",
    ".jsonl": "json",
    ".sqlite": "sqlite",
    ".sqlite3": "sqlite",
    ".db": "sqlite",
}
_KIND_NAMES = {"csv": "CSV", "parquet": "Parquet", "json": "JSON", "sqlite": "SQLite"}
_PARQUET_MAGIC = b"PAR1"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Bytes read to tell text from binary data.
_SNIFF_BYTES = 64 * 1024
#: Letters NFKD does not reduce to ASCII.
_TRANSLITERATE = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "ø": "o",
        "Ø": "O",
        "œ": "oe",
        "Œ": "OE",
        "ł": "l",
        "đ": "d",
        "þ": "th",
    }
)
_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "pipes"}


@dataclass(frozen=True)
class SandboxLimits:
    """What one upload and one conversation's sandbox may hold."""

    max_file_bytes: int = 50 * 1024 * 1024
    #: Rows across every table of a sandbox.
    max_rows: int = 5_000_000
    max_tables: int = 20
    #: Memory and threads of the loader (the query connector has its own).
    memory_limit: str = "1GB"
    threads: int = 2


@dataclass(frozen=True)
class LoadedTable:
    """A table a file became."""

    name: str
    source: str
    rows: int
    columns: int


class FileRejected(ConnectorError):
    """An upload the sandbox will not take; `message` says which file and why."""


def load_file(
    db: Path, file: Path, name: str, kind: str, limits: SandboxLimits
) -> list[LoadedTable]:
    """Load `file` (a `kind` upload called `name`) into the DuckDB database `db`, in one
    transaction on a connection of its own that may read nothing but that file."""
    con = duckdb.connect(
        str(db),
        config={
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "allow_community_extensions": False,
            "threads": limits.threads,
            "memory_limit": limits.memory_limit,
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
        scan, params = self._scan(file, kind)
        try:
            described = self.con.execute(f"DESCRIBE SELECT * FROM {scan}", params).fetchall()
        except duckdb.Error as exc:
            raise self._unreadable(kind, exc) from exc
        if kind == "csv":
            self._check_csv_shape(file, described)
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
        room = self.limits.max_rows - self.rows
        try:
            self.con.execute(
                f"CREATE TABLE {_q(table)} AS SELECT {select} FROM {scan} LIMIT ?",
                [*params, room + 1],
            )
        except duckdb.Error as exc:
            raise self._unreadable(kind, exc) from exc
        rows = self._count(table)
        self._check_rows(rows, room)
        self._describe(table, originals, columns, f"the file {self.name}", utc=zoned)
        return self._loaded(table, rows, len(columns))

    def load_sqlite(self, file: Path) -> list[LoadedTable]:
        """Every ordinary table of a SQLite file, each as a table."""
        try:
            with sandbox_sqlite.open_upload(file) as source:
                contents = sandbox_sqlite.read_contents(source)
                if not contents.tables:
                    raise FileRejected(
                        f"{self.name} has no tables to load.",
                        hint="Upload a SQLite file that holds tables (views are not read).",
                    )
                self._check_table_slots(len(contents.tables))
                self._check_rows(
                    sum(t.rows for t in contents.tables), self.limits.max_rows - self.rows
                )
                return [self._copy_sqlite_table(source, t) for t in contents.tables]
        except (sqlite3.Error, duckdb.Error) as exc:
            raise self._unreadable("sqlite", exc) from exc

    def _copy_sqlite_table(self, source: Any, table: sandbox_sqlite.SqliteTable) -> LoadedTable:
        name = self._table_name(table.name)
        originals = [c.name for c in table.columns]
        columns = self._column_names(originals)
        definition = ", ".join(
            f"{_q(n)} {c.duck_type}" for n, c in zip(columns, table.columns, strict=True)
        )
        self.con.execute(f"CREATE TABLE {_q(name)} ({definition})")
        sandbox_sqlite.copy_table(source, table, self.con, _q(name), [_q(c) for c in columns])
        for new, column in zip(columns, table.columns, strict=True):
            self._sniff_date(name, new, column)
        self._describe(name, originals, columns, f"table {table.name} of the file {self.name}")
        return self._loaded(name, table.rows, len(columns))

    def _sniff_date(self, table: str, column: str, source: sandbox_sqlite.SqliteColumn) -> None:
        """A text column declared DATE/DATETIME/TIMESTAMP becomes one when every value casts."""
        target = sandbox_sqlite.date_type(source.declared)
        if target is None or source.duck_type != "VARCHAR":
            return
        (bad,) = self.con.execute(
            f"SELECT count(*) FROM {_q(table)} "
            f"WHERE {_q(column)} IS NOT NULL AND TRY_CAST({_q(column)} AS {target}) IS NULL"
        ).fetchone()
        if bad == 0:
            self.con.execute(
                f"ALTER TABLE {_q(table)} ALTER COLUMN {_q(column)} SET DATA TYPE {target}"
            )

    def _scan(self, file: Path, kind: str, delim: str | None = None) -> tuple[str, list[Any]]:
        if kind == "parquet":
            return "read_parquet(?)", [str(file)]
        if kind == "json":
            return "read_json_auto(?)", [str(file)]
        options = ""
        params: list[Any] = [str(file)]
        if delim is not None:
            options += ", delim = ?, header = true"
            params.append(delim)
        if self._utf8 is None:
            self._utf8 = _is_utf8(file)
        if not self._utf8:
            options += ", encoding = 'latin-1'"
        return f"read_csv(?{options})", params

    def _check_csv_shape(self, file: Path, described: list[tuple[Any, ...]]) -> None:
        """DuckDB's sniffer reads a CSV whose rows disagree on their number of fields as one
        text column, and says only that it could not sniff the file when told the delimiter:
        name the first line that does not match the header instead."""
        if len(described) != 1:
            return
        header = str(described[0][0])
        counts = {d: header.count(d) for d in (",", ";", "\t", "|")}
        delim = max(counts, key=lambda d: counts[d])
        if counts[delim] == 0:
            return  # a genuine one-column file
        encoding = "utf-8-sig" if self._utf8 else "latin-1"
        with file.open(encoding=encoding, newline="") as f:
            rows = csv.reader(f, delimiter=delim)
            expected = len(next(rows, []))
            for row in rows:
                if row and len(row) != expected:
                    raise FileRejected(
                        f"could not read {self.name} as CSV: line {rows.line_num} has "
                        f"{len(row)} fields but the header has {expected} "
                        f"(separated by {_DELIMITER_NAMES[delim]}).",
                        hint="Fix that line (a missing or extra separator, or an unclosed "
                        "quote) or export the file again, and upload it again.",
                    )

    def _check_table_slots(self, count: int) -> None:
        if self.tables + count > self.limits.max_tables:
            left = self.limits.max_tables - self.tables
            raise FileRejected(
                f"{self.name} would add {count} table{'s' * (count != 1)}, but this conversation "
                f"has room for {max(left, 0)} more (at most {self.limits.max_tables}).",
                hint="Start a new conversation for more files.",
            )

    def _check_rows(self, rows: int, room: int) -> None:
        if rows > room:
            total = self.limits.max_rows
            raise FileRejected(
                f"{self.name} has more rows than fit: a conversation holds at most "
                f"{total:,} rows in all"
                + (f" and {total - room:,} are taken." if room < total else "."),
                hint="Upload a smaller extract (filter or aggregate it first).",
            )

    def _count(self, table: str) -> int:
        (rows,) = self.con.execute(f"SELECT count(*) FROM {_q(table)}").fetchone()
        return int(rows)

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

    def _unreadable(self, kind: str, exc: BaseException) -> FileRejected:
        if isinstance(exc, FileRejected):
            return exc
        return FileRejected(
            f"could not read {self.name} as {_KIND_NAMES[kind]}: {first_line(exc)}",
            hint=f"Check that it is a valid {_KIND_NAMES[kind]} file (open it, or export it "
            "again) and upload it again.",
            engine_message=str(exc),
        )


# -- names and formats ---------------------------------------------------------------------------


def detect_kind(file: Path, name: str) -> str:
    """csv, parquet, json or sqlite: the file's magic bytes first, then its name's extension."""
    with file.open("rb") as f:
        head = f.read(len(_SQLITE_MAGIC))
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    kind = _EXTENSIONS.get(Path(name).suffix.lower())
    if kind is None:
        raise FileRejected(
            f"{name} is not a {FORMATS} file.",
            hint="Export it as CSV (or Parquet) and upload that.",
        )
    if kind == "csv" and _is_binary(file):
        raise FileRejected(
            f"could not read {name} as CSV: it holds binary data, not text.",
            hint="Check that it really is a CSV file (a spreadsheet must be exported as CSV).",
        )
    return kind


def identifier(
    text: str, *, fallback: str, reserved: set[str] | frozenset[str] = frozenset()
) -> str:
    """A lower-case ASCII name (`Umsatz Größe 2024` -> `umsatz_grosse_2024`) that needs no
    quoting: letters, digits and underscores, not starting with a digit, not a `reserved` word
    and not one the gate's parser (sqlglot) reads as a keyword (`map`, `between`): those get a
    trailing underscore."""
    ascii_text = (
        unicodedata.normalize("NFKD", text.translate(_TRANSLITERATE))
        .encode("ascii", "ignore")
        .decode("ascii")
    )
    name = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")[:60]
    if not name:
        return fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if name in reserved or not _parses_as_name(name):
        name += "_"
    return name


@functools.lru_cache(maxsize=4096)
def _parses_as_name(name: str) -> bool:
    """Whether sqlglot reads `name` as a plain table and column name in DuckDB's SQL."""
    sql = f"SELECT {name}, COUNT(*) FROM {name} GROUP BY {name} ORDER BY {name}"
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return False
    return isinstance(tree, exp.Select) and tree.sql(dialect="duckdb") == sql


def format_size(size: int) -> str:
    """`120 MB`, `1.5 MB`, `800 KB` (powers of 1,024)."""
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            value = size / scale
            return (
                f"{value:.1f} {unit}".replace(".0 ", " ") if value < 10 else f"{value:.0f} {unit}"
            )
    return f"{size} bytes"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("\x00", "").replace("'", "''") + "'"


def _is_binary(file: Path) -> bool:
    with file.open("rb") as f:
        return b"\x00" in f.read(_SNIFF_BYTES)


def _is_utf8(file: Path) -> bool:
    """Whether the whole file decodes as UTF-8 (else DuckDB is told it is Latin-1)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with file.open("rb") as f:
            while chunk := f.read(1024 * 1024):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True
