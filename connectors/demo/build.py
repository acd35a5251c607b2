"""The demo warehouse: a small online shop's sales over two years, as a DuckDB file.

`ensure_demo` builds it on first use (in about a second); the rows come from `demo_data` (the shop
they describe from `demo_shop`), the tables and their comments from `demo_schema`.
"""

from __future__ import annotations

import csv
import os
import random
import tempfile
from pathlib import Path

import duckdb

from connectors.demo.data import SEED, Row, generate
from connectors.demo.schema import TABLES, VIEW_COMMENT, VIEW_COMMENTS, VIEW_NAME, VIEW_SQL


def demo_path(data_dir: Path) -> Path:
    """Where the demo warehouse lives in `data_dir`."""
    return data_dir / "demo.duckdb"


def ensure_demo(data_dir: Path) -> Path:
    """The demo warehouse in `data_dir`, built first when missing."""
    data_dir.mkdir(parents=True, exist_ok=True)
    return build_demo(demo_path(data_dir))


def build_demo(path: Path) -> Path:
    """Create the demo warehouse at `path` unless it exists, and return `path`.

    It is built in a temporary directory next to `path` and renamed into place, so a reader never
    sees a half-built file and two processes building at once both end with a whole one.
    """
    if path.exists():
        return path
    tables = generate(random.Random(SEED))
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.", dir=path.parent) as tmp:
        built = Path(tmp) / path.name
        _write(built, tables, staging=Path(tmp))
        os.replace(built, path)
    return path


def _write(target: Path, tables: dict[str, list[Row]], *, staging: Path) -> None:
    """Create the schema in `target` and load `tables` through CSV files in `staging`."""
    con = duckdb.connect(str(target), config={"threads": 1})
    try:
        for table, (comment, columns) in TABLES.items():
            ddl = ", ".join(f"{name} {type_}" for name, type_, _ in columns)
            con.execute(f"CREATE TABLE {table} ({ddl})")
            csv_path = staging / f"{table}.csv"
            with csv_path.open("w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(tables[table])
            con.execute(f"COPY {table} FROM {_quote(str(csv_path))} (FORMAT csv, HEADER false)")
            con.execute(f"COMMENT ON TABLE {table} IS {_quote(comment)}")
            for name, _, text in columns:
                con.execute(f"COMMENT ON COLUMN {table}.{name} IS {_quote(text)}")
        con.execute(VIEW_SQL)
        con.execute(f"COMMENT ON VIEW {VIEW_NAME} IS {_quote(VIEW_COMMENT)}")
        for name, text in VIEW_COMMENTS:
            con.execute(f"COMMENT ON COLUMN {VIEW_NAME}.{name} IS {_quote(text)}")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
