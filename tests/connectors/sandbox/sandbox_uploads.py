"""Uploading fixture files into a thread's sandbox and reading back what it holds, for the
sandbox tests (the `sandboxes` and `query` fixtures are in conftest.py)."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from connectors.base import TableInfo
from connectors.sandbox.files import FileRejected
from connectors.sandbox.sandboxes import Sandboxes

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
THREAD = "T0TEST:C0FILES:1800000001.000100"


def upload(tmp_path: Path, name: str, content: bytes | None = None) -> Path:
    """A copy of a fixture file (or `content`) where the bot keeps a download."""
    target = tmp_path / "incoming" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.copy(FILES / name, target)
    else:
        target.write_bytes(content)
    return target


def load(sandboxes: Sandboxes, tmp_path: Path, name: str, thread: str = THREAD) -> list:
    return sandboxes.load(thread, upload(tmp_path, name), name)


def tables(sandboxes: Sandboxes, thread: str = THREAD) -> dict[str, TableInfo]:
    connector = sandboxes.open(thread)
    try:
        return {t.short_name: t for t in connector.list_tables()}
    finally:
        connector.close()


def rejected(sandboxes: Sandboxes, tmp_path: Path, name: str, content: bytes | None = None) -> str:
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(THREAD, upload(tmp_path, name, content), name)
    assert caught.value.hint
    return caught.value.message


def make_sqlite(path: Path) -> Path:
    with closing(sqlite3.connect(path)) as con:
        con.executescript(
            """
            CREATE TABLE "Customers" (id INTEGER PRIMARY KEY, name TEXT, joined DATE,
                                      score REAL, note);
            INSERT INTO "Customers" VALUES (1, 'Ada', '2026-01-05', 4.5, 7),
                                         (2, 'Grace', '2026-02-11', 3, 'vip'),
                                         (3, 'Linus', NULL, NULL, x'00ff');
            CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, total NUMERIC,
                                 placed_at DATETIME);
            INSERT INTO orders VALUES (10, 1, 19.5, '2026-03-01 10:00:00'),
                                      (11, 1, 5, '2026-03-02 11:30:00'),
                                      (12, 2, 42, 'not a time');
            CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 10;
            CREATE TRIGGER log_orders AFTER INSERT ON orders BEGIN
                DELETE FROM "Customers";
            END;
            """
        )
        con.commit()
    return path
