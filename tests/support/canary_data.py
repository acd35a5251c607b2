"""What every canary holds: three small tables (their columns and rows, as each dialect names
them), the secret files beside them, and the checksums and file listings that show a change."""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent.gate import GateSchema
from connectors.base import ColumnInfo, TableInfo

COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "customers": (("id", "INTEGER"), ("name", "VARCHAR(100)"), ("email", "VARCHAR(100)")),
    "orders": (
        ("id", "INTEGER"),
        ("customer_id", "INTEGER"),
        ("amount", "DECIMAL(10,2)"),
        ("ordered_at", "DATE"),
    ),
    "users": (("id", "INTEGER"), ("username", "VARCHAR(100)"), ("password", "VARCHAR(100)")),
}
ROWS: dict[str, list[tuple[Any, ...]]] = {
    "customers": [(1, "Ada", "ada@example.com"), (2, "Grace", "grace@example.com"), (3, "x", "")],
    "orders": [
        (1, 1, "10.50", "2026-01-05"),
        (2, 1, "4.50", "2026-02-01"),
        (3, 2, "7.00", "2026-01-20"),
        (4, 3, "1.25", "2026-03-03"),
    ],
    "users": [(1, "admin", "hash-of-admin"), (2, "guest", "hash-of-guest")],
}
MARIADB_DB = "querybot_gate_canary"


def table_names(dialect: str) -> dict[str, str]:
    """Each canary table's fully qualified name as the `dialect` connector would list it."""
    prefix = {
        "duckdb": "canary.main.",
        "sqlite": "main.",
        "mysql": f"{MARIADB_DB}.",
        "postgres": "public.",
        "bigquery": "querybot-demo.canary.",
    }[dialect]
    return {table: f"{prefix}{table}" for table in COLUMNS}


def tables(dialect: str) -> list[TableInfo]:
    names = table_names(dialect)
    return [
        TableInfo(names[t], tuple(ColumnInfo(c, ty) for c, ty in cols))
        for t, cols in COLUMNS.items()
    ]


def schema(dialect: str) -> GateSchema:
    return GateSchema.from_tables(tables(dialect), dialect)


def secret_text() -> str:
    """What the secret files hold (to prove a server could read them without the guards)."""
    return f"CANARY-SECRET-{os.getpid()}"


def checksum(rows: Iterable[tuple[Any, ...]]) -> str:
    return hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()[:16]


def files(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file under `directory` with its size and modification time."""
    listing = {}
    for path in sorted(directory.rglob("*")):
        stat = path.stat()
        listing[str(path.relative_to(directory))] = (stat.st_size, stat.st_mtime_ns)
    return listing


def write_secrets(directory: Path) -> None:
    """Files a leaking statement would read: their content is the secret marker."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "secret.txt").write_text(secret_text() + "\n")
    (directory / "secret.csv").write_text(f"secret\n{secret_text()}\n")


def write_csvs(directory: Path) -> list[Path]:
    """Each canary table as `<table>.csv` (a header, then its rows) in `directory`, the way a
    person would upload it into a thread."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for table, cols in COLUMNS.items():
        path = directory / f"{table}.csv"
        with path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(name for name, _ in cols)
            writer.writerows(ROWS[table])
        written.append(path)
    return written
