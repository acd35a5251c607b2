"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files: the size,
row and table limits.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.files import FileRejected
from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import (
    THREAD,
    load,
    make_sqlite,
    rejected,
    tables,
)


def test_oversized_file(tmp_path: Path) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SandboxLimits(max_file_bytes=200))
    message = rejected(sandboxes, tmp_path, "sales.csv")
    assert message == "sales.csv is 317 bytes; the limit is 200 bytes."


@pytest.mark.slow
def test_row_limit_counts_every_table_of_the_thread(tmp_path: Path, query) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SandboxLimits(max_rows=10))
    load(sandboxes, tmp_path, "sales.csv")  # 8 rows
    with pytest.raises(FileRejected) as caught:
        load(sandboxes, tmp_path, "events.ndjson")  # 3 more
    assert caught.value.message == (
        "events.ndjson has more rows than fit: a conversation holds at most 10 rows in all "
        "and 8 are taken."
    )
    assert set(tables(sandboxes)) == {"sales"}, "the refused file left no table behind"
    load(sandboxes, tmp_path, "budget.json")  # 2 more: fits
    assert set(tables(sandboxes)) == {"sales", "budget"}


@pytest.mark.slow
def test_table_limit(tmp_path: Path) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SandboxLimits(max_tables=2))
    load(sandboxes, tmp_path, "sales.csv")
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(THREAD, make_sqlite(tmp_path / "crm.sqlite"), "crm.sqlite")
    assert caught.value.message == (
        "crm.sqlite would add 2 tables, but this conversation has room for 1 more (at most 2)."
    )
    assert set(tables(sandboxes)) == {"sales"}
