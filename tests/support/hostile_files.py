"""The hostile uploads of issue 15 (item 6), written at any size: small ones for the tests, the
issue's own sizes for bench/resource_files.py. Each is small on disk and huge once read.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import duckdb


def wide_csv(path: Path, columns: int = 4000, rows: int = 1) -> Path:
    """A CSV of `columns` columns (4,000: about 30 kB): DuckDB's sniffer and the loader's
    catalog work grow with the square of the column count."""
    header = ",".join(f"c{i}" for i in range(columns))
    line = ",".join("1" for _ in range(columns))
    path.write_text(header + "\n" + (line + "\n") * rows, encoding="utf-8")
    return path


def sqlite_default(path: Path, rows: int = 200_000, value_bytes: int = 1_000_000) -> Path:
    """A SQLite file whose column, added by `ALTER TABLE ADD COLUMN ... DEFAULT '<value>'`,
    takes the `value_bytes` default on each of its `rows` older rows (about 3 MB on disk at
    200,000 rows, 200 GB once read)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
        db.executemany("INSERT INTO t (n) VALUES (?)", ((i,) for i in range(rows)))
        db.execute(f"ALTER TABLE t ADD COLUMN pad TEXT DEFAULT '{'x' * value_bytes}'")
        db.commit()
    return path


def sqlite_generated(
    path: Path, rows: int = 200_000, value_bytes: int = 1_000_000, *, length_only: bool = False
) -> Path:
    """A SQLite file whose virtual generated column computes a `value_bytes` string with
    `printf` on every read of each of its `rows` rows (about 2 MB on disk at 200,000 rows);
    `length_only`: the column holds only the length of that string with every character
    replaced (a few ms of CPU a row at 2 MB), so reading it costs time but no room. The width
    depends on the row (`+ id % 2`), or SQLite would compute the constant expression once. SQLite
    computes the column on insert too, so the rows go in under a one-byte expression and the
    schema is edited afterwards, as anyone crafting such a file can."""
    expression = "printf('%.*c', 1, 'x')"
    if length_only:
        expression = f"length(replace({expression}, 'x', 'y'))"
    with closing(sqlite3.connect(path)) as db:
        db.execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, "
            f"pad GENERATED ALWAYS AS ({expression}) VIRTUAL)"
        )
        db.executemany("INSERT INTO t (id) VALUES (?)", ((i,) for i in range(rows)))
        db.commit()
        db.execute("PRAGMA writable_schema = ON")
        db.execute(
            "UPDATE sqlite_master SET sql = replace(sql, '%.*c'', 1,', ?) WHERE name = 't'",
            [f"%.*c', {value_bytes} + id % 2,"],
        )
        db.commit()
    return path


def parquet_dictionary(path: Path, rows: int = 40_000, value_bytes: int = 1_000_000) -> Path:
    """A Parquet file whose one dictionary entry (a `value_bytes` string, compressed to almost
    nothing) is repeated by `rows` indices: about 1.4 kB on disk, `rows * value_bytes` once
    read (40 GB by default; writing that takes DuckDB about 30 s, as it hashes every value)."""
    target = str(path).replace("'", "''")
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT s FROM (SELECT repeat('x', {value_bytes}) AS s) "
            f"CROSS JOIN range({rows})) TO '{target}' (FORMAT parquet, COMPRESSION zstd)"
        )
    return path
