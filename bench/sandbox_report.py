"""Sandbox loading benchmark: how long loading an upload takes at the default size limit.

    uv run python -m bench.sandbox_report [--rows 1000000] [--out DIR]

Writes a CSV of `--rows` sales-like rows (about 50 MB at 1,000,000 rows, the default
QUERYBOT_FILE_MAX_MB), the same rows as Parquet (by DuckDB) and as a SQLite table (by sqlite3),
then loads each into a fresh sandbox with `Sandboxes.load` (raised limits, so the file is not
refused) and times it, and a first query through the read-only connector.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from contextlib import closing
from pathlib import Path

import duckdb

from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.sandboxes import Sandboxes
from connectors.units import byte_size

_ROWS_SQL = """
SELECT i AS order_id,
       DATE '2025-01-01' + (i % 365)::INTEGER AS order_date,
       ['North', 'South', 'East', 'West'][1 + i % 4] AS region,
       'Product ' || (i % 500) AS product,
       1 + i % 7 AS quantity,
       round((i % 10000) / 100.0, 2) AS amount,
       'customer-' || (i % 50000) || '@example.com' AS email
FROM range({rows}) t(i)
"""


def write_files(folder: Path, rows: int) -> dict[str, Path]:
    files = {
        "csv": folder / "sales.csv",
        "parquet": folder / "sales.parquet",
        "sqlite": folder / "sales.sqlite",
    }
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE t AS {_ROWS_SQL.format(rows=rows)}")
        con.execute(f"COPY t TO '{files['csv']}' (HEADER)")
        con.execute(f"COPY t TO '{files['parquet']}' (FORMAT parquet)")
        data = con.execute("SELECT * FROM t").fetchall()
    with closing(sqlite3.connect(files["sqlite"])) as db:
        db.execute(
            "CREATE TABLE sales (order_id INTEGER, order_date DATE, region TEXT, product TEXT, "
            "quantity INTEGER, amount REAL, email TEXT)"
        )
        db.executemany(
            "INSERT INTO sales VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r[0], r[1].isoformat(), *r[2:]) for r in data],
        )
        db.commit()
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="sandbox-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        files = write_files(folder, args.rows)
        limits = SandboxLimits(max_file_bytes=10**10, max_rows=10**9)
        print(f"{args.rows:,} rows")
        print("| File | Size | Load | Sandbox on disk | First query |")
        print("| --- | --- | --- | --- | --- |")
        for kind, path in files.items():
            sandboxes = Sandboxes(folder / f"sandboxes-{kind}", limits)
            started = time.perf_counter()
            sandboxes.load("bench", path, path.name)
            loaded = time.perf_counter() - started
            connector = sandboxes.open("bench")
            started = time.perf_counter()
            connector.run(
                "SELECT region, sum(amount) FROM sales GROUP BY 1", max_rows=10, timeout_s=60
            )
            queried = time.perf_counter() - started
            connector.close()
            disk = sandboxes.path("bench").stat().st_size
            print(
                f"| {kind} | {byte_size(path.stat().st_size)} | {loaded:.2f} s "
                f"| {byte_size(disk)} | {queried * 1000:.0f} ms |"
            )
    finally:
        if args.out is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
