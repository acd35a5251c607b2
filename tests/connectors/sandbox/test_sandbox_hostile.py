"""Hostile uploads (issue 15, item 6) through the real loader: the child process, real DuckDB and
SQLite. Each file of the issue, written small, is refused by its deterministic bound with a clear
message, and the same file with that bound off is still stopped, by a hard limit of the loader
process (memory, time, disk): so it really costs more than the bounds allow, and the test could
fail. After each refusal a normal file still loads into the same conversation.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from connectors.sandbox import sandboxes as sandbox_module
from connectors.sandbox.bounds import MIB, SandboxLimits
from connectors.sandbox.files import FileRejected
from connectors.sandbox.sandboxes import Sandboxes
from tests.support import hostile_files

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
THREAD = "T0TEST:C0HOSTILE:1800000001.000100"

#: Small bounds, so each test is quick and light.
SMALL = SandboxLimits(
    max_columns=100,
    max_cells=100_000,
    max_expanded_bytes=50 * MIB,
    memory_bytes=200 * MIB,
    timeout_s=60,
    disk_bytes=100 * MIB,
)
#: The deterministic bounds switched off: only the loader's memory and disk limits are left. The
#: clock is pushed far out too: on a loaded machine a bomb was still short of 100 MB of disk at
#: 60 s and the timeout stopped it instead (the timeout has a test of its own below).
OFF = {"max_columns": 10**6, "max_cells": 10**12, "max_expanded_bytes": 10**13, "timeout_s": 900}


def refused(sandboxes: Sandboxes, file: Path) -> FileRejected:
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(THREAD, file, file.name)
    return caught.value


def a_normal_file_still_loads(sandboxes: Sandboxes, tmp_path: Path) -> None:
    target = tmp_path / "sales.csv"
    shutil.copy(FILES / "sales.csv", target)
    (table,) = sandboxes.load(THREAD, target, "sales.csv")
    assert (table.name, table.rows, table.columns) == ("sales", 8, 6)
    connector = sandboxes.open(THREAD)
    try:
        assert connector.run("SELECT count(*) FROM sales", max_rows=1, timeout_s=10).rows == [(8,)]
    finally:
        connector.close()


@pytest.mark.slow
def test_a_csv_of_thousands_of_columns(tmp_path: Path) -> None:
    wide = hostile_files.wide_csv(tmp_path / "wide.csv", columns=2000)
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    rejection = refused(sandboxes, wide)
    assert rejection.bound == "columns"
    assert rejection.message == "wide.csv has 2,000 columns; the limit is 100."
    assert "Export only the columns you need" in rejection.hint
    a_normal_file_still_loads(sandboxes, tmp_path)

    # without the column bound, DuckDB's sniffer and the catalog work take over 200 MB
    unbounded = Sandboxes(tmp_path / "sb-off", replace(SMALL, **OFF))
    rejection = refused(unbounded, wide)
    assert rejection.bound == "memory", rejection.message
    assert rejection.message.startswith("loading wide.csv needed more than 200 MiB of memory")
    assert not unbounded.exists(THREAD), "nothing is left of a load that was stopped"


@pytest.mark.slow
def test_a_sqlite_default_repeated_on_every_row(tmp_path: Path) -> None:
    bomb = hostile_files.sqlite_default(tmp_path / "default.sqlite", rows=2000, value_bytes=MIB)
    assert bomb.stat().st_size < 2 * MIB
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    rejection = refused(sandboxes, bomb)
    assert rejection.bound == "expanded"
    assert rejection.message.startswith("default.sqlite expands to 2 GiB once read (the default")
    a_normal_file_still_loads(sandboxes, tmp_path)

    unbounded = Sandboxes(tmp_path / "sb-off", replace(SMALL, **OFF))
    assert refused(unbounded, bomb).bound in {"memory", "disk"}


@pytest.mark.slow
def test_a_sqlite_generated_column_with_printf(tmp_path: Path) -> None:
    # 600 MiB once read: the bound stops it at 50 MiB; unbounded, it is three times the
    # loader's memory and six times its disk
    bomb = hostile_files.sqlite_generated(tmp_path / "gen.sqlite", rows=600, value_bytes=MIB)
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    rejection = refused(sandboxes, bomb)
    assert rejection.bound == "expanded"
    assert "expands past the limit once read (column t.pad)" in rejection.message
    a_normal_file_still_loads(sandboxes, tmp_path)

    unbounded = Sandboxes(tmp_path / "sb-off", replace(SMALL, **OFF))
    assert refused(unbounded, bomb).bound in {"memory", "disk"}


@pytest.mark.slow
def test_a_generated_column_that_takes_long_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    # each row's value is a number, computed from a 2 MB string (about 4 ms of CPU a row, over
    # an hour for the file): no bound of size sees it, and it is shorter than the file, so
    # SQLite's length limit (no value longer than the file) does not make it a quick NULL
    slow = hostile_files.sqlite_generated(
        tmp_path / "slow.sqlite", rows=1_000_000, value_bytes=2 * MIB, length_only=True
    )
    assert slow.stat().st_size > 2 * MIB
    sandboxes = Sandboxes(
        # 10 s: enough for a normal file's load, child start included, on a busy machine
        tmp_path / "sb",
        replace(SMALL, max_cells=10**7, memory_bytes=1024 * MIB, timeout_s=10),
    )
    rejection = refused(sandboxes, slow)
    assert rejection.bound == "time"
    assert rejection.message.startswith("loading slow.sqlite took longer than 10 seconds")
    a_normal_file_still_loads(sandboxes, tmp_path)


@pytest.mark.slow
def test_a_parquet_dictionary_bomb(tmp_path: Path) -> None:
    bomb = hostile_files.parquet_dictionary(tmp_path / "d.parquet", rows=2000, value_bytes=MIB)
    assert bomb.stat().st_size < 4096
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    rejection = refused(sandboxes, bomb)
    assert rejection.bound == "expanded"
    assert rejection.message.startswith("d.parquet expands to 2 GiB once read;")
    a_normal_file_still_loads(sandboxes, tmp_path)

    unbounded = Sandboxes(tmp_path / "sb-off", replace(SMALL, **OFF))
    assert refused(unbounded, bomb).bound in {"memory", "disk"}


@pytest.mark.slow
def test_disk_is_bounded_across_the_loaders_temp_files(tmp_path: Path) -> None:
    # DuckDB spills the expanded dictionary into many temp files, each under RLIMIT_FSIZE and
    # together past its own max_temp_directory_size: the loader's directory is measured
    bomb = hostile_files.parquet_dictionary(tmp_path / "d.parquet", rows=2000, value_bytes=MIB)
    sandboxes = Sandboxes(
        tmp_path / "sb", replace(SMALL, **OFF, memory_bytes=1024 * MIB, disk_bytes=50 * MIB)
    )
    rejection = refused(sandboxes, bomb)
    assert rejection.bound == "disk"
    assert rejection.message.startswith("loading d.parquet would take more than 50 MiB of disk")
    assert not sandboxes.exists(THREAD)
    assert list(sandboxes.root.iterdir()) == [], "no staging copy or temp file is left"


@pytest.mark.slow
@pytest.mark.parametrize(
    "write",
    [
        lambda p: hostile_files.wide_csv(p / "cells.csv", columns=50, rows=3000),
        lambda p: hostile_files.parquet_dictionary(
            p / "cells.parquet", rows=200_000, value_bytes=1
        ),
    ],
)
def test_cells(tmp_path: Path, write: Callable[[Path], Path]) -> None:
    file = write(tmp_path)
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    rejection = refused(sandboxes, file)
    assert rejection.bound == "cells"
    assert f"{file.name} holds more than 100,000 values" in rejection.message
    a_normal_file_still_loads(sandboxes, tmp_path)
    # the same file loads with room for its values
    roomy = Sandboxes(tmp_path / "sb-roomy", replace(SMALL, max_cells=10**7))
    assert roomy.load(THREAD, file, file.name)[0].rows in {3000, 200_000}


@pytest.mark.slow
def test_a_refused_load_leaves_the_sandbox_as_it_was(tmp_path: Path) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    a_normal_file_still_loads(sandboxes, tmp_path)
    before = sandboxes.path(THREAD).read_bytes()
    bomb = hostile_files.sqlite_default(tmp_path / "default.sqlite", rows=2000, value_bytes=MIB)
    stopped = Sandboxes(sandboxes.root, replace(SMALL, **OFF))
    assert refused(stopped, bomb).bound in {"memory", "disk"}
    assert sandboxes.path(THREAD).read_bytes() == before
    assert sorted(p.name for p in sandboxes.directory(THREAD).iterdir()) == [
        "files.duckdb",
        "thread.json",
    ]


@pytest.mark.slow
def test_a_sqlite_file_loads_with_a_size_limit_past_a_c_int(tmp_path: Path) -> None:
    # SQLite's value length limit is a C int: a file limit of 10 GB must not overflow it
    small = hostile_files.sqlite_default(tmp_path / "ok.sqlite", rows=10, value_bytes=10)
    sandboxes = Sandboxes(tmp_path / "sb", replace(SMALL, max_file_bytes=10 * 1024**3))
    (table,) = sandboxes.load(THREAD, small, small.name)
    assert (table.rows, table.columns) == (10, 3)


def test_at_most_two_loads_run_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many workers load files, at most LOADS_AT_ONCE loader processes run: the
    memory and disk bounds of one load multiply by that at most."""
    inside: list[str] = []
    most = [0]
    release = threading.Event()
    guard = threading.Lock()

    def fake_load(db: Path, file: Path, name: str, *args: object) -> list[object]:
        with guard:
            inside.append(name)
            most[0] = max(most[0], len(inside))
        release.wait(30)
        with guard:
            inside.remove(name)
        raise FileRejected(f"{name} stopped by the test")

    def load(thread: str) -> None:
        with contextlib.suppress(FileRejected):
            sandboxes.load(thread, file, "w.csv")

    monkeypatch.setattr(sandbox_module, "load_bounded", fake_load)
    sandboxes = Sandboxes(tmp_path / "sb", SMALL)
    file = hostile_files.wide_csv(tmp_path / "w.csv", columns=3)
    threads = [threading.Thread(target=load, args=(f"T{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for _ in range(300):  # until two are in (or the test gives up)
        if len(inside) == 2:
            break
        time.sleep(0.01)
    time.sleep(0.3)  # room for a third to come in, if it could
    entered = most[0]
    release.set()
    for thread in threads:
        thread.join(30)
    assert entered == sandbox_module.LOADS_AT_ONCE == 2
    assert most[0] == 2 and inside == []
