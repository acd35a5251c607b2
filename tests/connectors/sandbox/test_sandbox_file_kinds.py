"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files: files
that are broken or not what their name says are refused, or read as what they are.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import (
    THREAD,
    make_sqlite,
    rejected,
)


@pytest.mark.slow
def test_broken_csv_names_the_line(sandboxes: Sandboxes, tmp_path: Path) -> None:
    message = rejected(sandboxes, tmp_path, "broken.csv")
    assert message == (
        "could not read broken.csv as CSV: line 3 has 4 fields but the header has 2 "
        "(separated by commas)."
    )
    assert not sandboxes.exists(THREAD)
    assert not sandboxes.directory(THREAD).exists(), "a refused first file leaves nothing"


def test_binary_file_named_csv(sandboxes: Sandboxes, tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    message = rejected(sandboxes, tmp_path, "chart.csv", png)
    assert message == "could not read chart.csv as CSV: it holds binary data, not text."


def test_other_kinds_of_file(sandboxes: Sandboxes, tmp_path: Path) -> None:
    xlsx = b"PK\x03\x04" + b"\x00" * 200
    assert rejected(sandboxes, tmp_path, "report.xlsx", xlsx) == (
        "report.xlsx is not a CSV, Parquet, JSON or SQLite file."
    )
    assert rejected(sandboxes, tmp_path, "notes", b"just some text\n") == (
        "notes is not a CSV, Parquet, JSON or SQLite file."
    )


@pytest.mark.slow
def test_files_that_do_not_hold_what_their_name_says(sandboxes: Sandboxes, tmp_path: Path) -> None:
    parquet = rejected(sandboxes, tmp_path, "data.parquet", b"id,name\n1,x\n")
    assert parquet.startswith("could not read data.parquet as Parquet: ")
    json_ = rejected(sandboxes, tmp_path, "data.json", b'{"a": 1,,}')
    assert json_.startswith("could not read data.json as JSON: ")
    db = rejected(sandboxes, tmp_path, "data.sqlite", b"not a database at all" * 100)
    assert db == "could not read data.sqlite as SQLite: file is not a database"
    assert rejected(sandboxes, tmp_path, "blank.csv", b"") == "blank.csv is empty."
    assert not sandboxes.directory(THREAD).exists()


@pytest.mark.slow
def test_magic_bytes_win_over_the_name(sandboxes: Sandboxes, tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "export")
    loaded = sandboxes.load(THREAD, db, "export")  # no extension: read as what it is
    assert [t.name for t in loaded] == ["customers", "orders"]
