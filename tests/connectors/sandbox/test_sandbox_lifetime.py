"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files: idle
sandboxes swept, removal, and staging directories cleaned up.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import (
    THREAD,
    load,
    tables,
)


def used_at(sandboxes: Sandboxes, thread: str, when: float) -> None:
    """Pretend the thread's sandbox was last used at `when` (its record's modification time)."""
    os.utime(sandboxes.directory(thread) / "thread.json", (when, when))


@pytest.mark.slow
def test_sweep_removes_idle_sandboxes_and_keeps_a_tombstone(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    idle_thread, busy_thread = THREAD, "T0TEST:C0FILES:1800000009.000100"
    load(sandboxes, tmp_path, "sales.csv", thread=idle_thread)
    load(sandboxes, tmp_path, "budget.json", thread=busy_thread)
    start = time.time()
    used_at(sandboxes, idle_thread, start - 1000)
    used_at(sandboxes, busy_thread, start - 100)
    assert sandboxes.sweep(idle_s=2000) == []
    assert sandboxes.sweep(idle_s=500) == [idle_thread]
    assert not sandboxes.exists(idle_thread)
    assert not sandboxes.path(idle_thread).exists()
    assert sandboxes.exists(busy_thread)
    tomb = sandboxes.info(idle_thread)
    assert tomb is not None and tomb.removed_at is not None
    assert tomb.thread_id == idle_thread and tomb.file_names == ["sales.csv"]
    # a tombstone is not swept again, and is purged after tombstone_s
    assert idle_thread not in sandboxes.idle(idle_s=0)
    sandboxes.tombstone_s = 0
    assert sandboxes.sweep(idle_s=10**9) == []
    assert sandboxes.info(idle_thread) is None
    assert not sandboxes.directory(idle_thread).exists()
    assert sandboxes.exists(busy_thread)


@pytest.mark.slow
def test_touch_restarts_the_idle_clock(sandboxes: Sandboxes, tmp_path: Path) -> None:
    load(sandboxes, tmp_path, "sales.csv")
    first = sandboxes.info(THREAD).last_used
    assert sandboxes.idle(idle_s=60, now=first + 61) == [THREAD]
    sandboxes.touch(THREAD)
    touched = sandboxes.info(THREAD).last_used
    assert touched >= first
    assert sandboxes.idle(idle_s=60, now=touched + 59) == []


@pytest.mark.slow
def test_remove_then_a_new_file_starts_afresh(sandboxes: Sandboxes, tmp_path: Path) -> None:
    load(sandboxes, tmp_path, "sales.csv")
    assert sandboxes.remove(THREAD) is True
    assert sandboxes.remove(THREAD) is False
    assert sandboxes.info(THREAD).removed_at is not None
    load(sandboxes, tmp_path, "budget.json")
    info = sandboxes.info(THREAD)
    assert info.removed_at is None and info.file_names == ["budget.json"]
    assert set(tables(sandboxes)) == {"budget"}


def test_staging_directories_are_removed_after_use_or_a_crash(sandboxes: Sandboxes) -> None:
    with sandboxes.staging() as directory:
        (directory / "upload.csv").write_text("a\n1\n")
        assert directory.parent == sandboxes.root
    assert not directory.exists()
    with sandboxes.staging() as left:  # as if the process died mid-download
        shutil.copytree(left, sandboxes.root / (left.name + "-crashed"))
    crashed = sandboxes.root / (left.name + "-crashed")
    sandboxes.purge()
    assert crashed.exists(), "a download may still be running"
    old = time.time() - 7200
    os.utime(crashed, (old, old))
    sandboxes.purge()
    assert not crashed.exists()
