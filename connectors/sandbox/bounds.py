"""The bounds an uploaded file is held to, and the refusal a person sees when one is hit.

An upload is anybody's file, and a small one can cost far more than its size: a CSV header of
thousands of columns (DuckDB's sniffer and the loader's catalog work grow with their square), a
SQLite default or generated column repeated on every row, a Parquet dictionary repeated by its
indices. Deterministic checks refuse those before or while loading (columns, cells, expanded
bytes); the loader process runs under hard operating-system limits for whatever they miss
(memory, time, disk: `load_bounded`). Each refusal says which bound it hit and what to do;
`FileRejected.bound` names the bound for the bot, which adds the setting that sets it.
"""

from __future__ import annotations

import csv
import errno
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from connectors.sandbox.files import KIND_NAMES, FileRejected
from connectors.units import byte_size

MIB = 1024 * 1024
#: What of an engine's own error text a refusal keeps: DuckDB's CSV errors quote the whole line.
_ENGINE_TEXT = 2000

#: DuckDB's words for memory it could not get, in errors of other kinds than OutOfMemory.
_DUCKDB_MEMORY = ("Out of Memory", "failed to pin block", "could not allocate")

_SPLIT = "Split the file into smaller ones (fewer rows or fewer columns) and upload those."


@dataclass(frozen=True)
class SandboxLimits:
    """What one upload and one conversation's sandbox may hold, and what loading a file may
    cost."""

    max_file_bytes: int = 50 * MIB
    #: Rows across every table of a sandbox.
    max_rows: int = 5_000_000
    max_tables: int = 20
    #: Columns of one table.
    max_columns: int = 500
    #: Values (rows times columns) in one file.
    max_cells: int = 50_000_000
    #: Bytes one value (a CSV or TSV field, a JSON or Parquet string) may take: the bound on one
    #: value of a query's result (QUERYBOT_MAX_CELL_BYTES), which a longer one could never pass.
    max_field_bytes: int = MIB
    #: Bytes one file's values take once read, each string at its full length: what a Parquet
    #: dictionary or a SQLite default or generated column expands to.
    max_expanded_bytes: int = 1024 * MIB
    #: Memory the loader process may take beyond the interpreter's own (DuckDB's memory limit
    #: is half of it); also the DuckDB memory limit of queries on the sandbox.
    memory_bytes: int = 1024 * MIB
    #: Wall-clock seconds loading one file may take, the loader's start included.
    timeout_s: float = 120.0
    #: The sandbox's database file, and the temp files a load or a query may write.
    disk_bytes: int = 1024 * MIB


def too_many_columns(
    name: str, columns: int, limits: SandboxLimits, where: str = ""
) -> FileRejected:
    return FileRejected(
        f"{name}{where} has {columns:,} columns; the limit is {limits.max_columns:,}.",
        hint="Export only the columns you need (or split the file into several with fewer "
        "columns) and upload that.",
        bound="columns",
    )


def too_many_cells(name: str, limits: SandboxLimits) -> FileRejected:
    return FileRejected(
        f"{name} holds more than {limits.max_cells:,} values (rows times columns), the limit.",
        hint="Upload a smaller extract: filter or aggregate it first, or export fewer columns.",
        bound="cells",
    )


def too_long_value(
    name: str, size: int | None, limits: SandboxLimits, where: str = ""
) -> FileRejected:
    """`size`: the value's bytes, or None when only known to be over the bound; `where`: the
    column or line it is in."""
    amount = f"of {byte_size(size)}" if size is not None else "longer than the limit"
    return FileRejected(
        f"{name} holds a value {amount}{where}; one value may be at most "
        f"{byte_size(limits.max_field_bytes)}.",
        hint="Shorten or drop that column (or check the file for a missing quote or line "
        "break, which makes many values one) and upload it again.",
        bound="field",
    )


def too_expanded(
    name: str, size: int | None, limits: SandboxLimits, what: str = ""
) -> FileRejected:
    """`size`: the bytes it expands to, or None when only known to be over the limit."""
    amount = f"to {byte_size(size)}" if size is not None else "past the limit"
    return FileRejected(
        f"{name} expands {amount} once read{what}; the limit is "
        f"{byte_size(limits.max_expanded_bytes)}.",
        hint="Its values take far more room than the file itself (a compressed dictionary, or "
        "a default or computed column repeated on every row). Export the data as CSV, or "
        "with fewer rows, and upload that.",
        bound="expanded",
    )


def out_of_memory(name: str, limits: SandboxLimits) -> FileRejected:
    return FileRejected(
        f"loading {name} needed more than {byte_size(limits.memory_bytes)} of memory, the "
        "limit, so it was stopped and nothing was loaded.",
        hint=_SPLIT,
        bound="memory",
    )


def out_of_time(name: str, limits: SandboxLimits) -> FileRejected:
    return FileRejected(
        f"loading {name} took longer than {limits.timeout_s:g} seconds, the limit, so it was "
        "stopped and nothing was loaded.",
        hint=_SPLIT,
        bound="time",
    )


def out_of_disk(name: str, limits: SandboxLimits) -> FileRejected:
    return FileRejected(
        f"loading {name} would take more than {byte_size(limits.disk_bytes)} of disk, the "
        "limit for a conversation's files, so nothing was loaded.",
        hint=f"{_SPLIT} Or start a new conversation for it.",
        bound="disk",
    )


def over_bound(name: str, exc: BaseException, limits: SandboxLimits) -> FileRejected | None:
    """The refusal for an engine error that is a bound being hit (memory, disk, a value
    longer than the file or than one value may be), else None."""
    text = str(exc)
    if (isinstance(exc, OSError) and exc.errno == errno.EFBIG) or "File too large" in text:
        return out_of_disk(name, limits)
    if "max_temp_directory_size" in text or "temp_directory" in text:
        return out_of_disk(name, limits)
    if isinstance(exc, MemoryError | duckdb.OutOfMemoryException):
        return out_of_memory(name, limits)
    if isinstance(exc, duckdb.Error) and any(m in text for m in _DUCKDB_MEMORY):
        return out_of_memory(name, limits)  # e.g. a COMMIT that could not pin its blocks
    if isinstance(exc, csv.Error) and "field larger than field limit" in text:
        return too_long_value(name, None, limits)  # Python's reader, held to max_field_bytes
    if isinstance(exc, sqlite3.Error):
        if "string or blob too big" in text:
            return too_expanded(name, None, limits)
        if "out of memory" in text:
            return out_of_memory(name, limits)
    return None


def unreadable(
    name: str, kind: str, exc: BaseException, limits: SandboxLimits, paths: Sequence[str] = ()
) -> FileRejected:
    """The refusal for any failure to read `name` as a `kind` file: the bound it hit when it is
    one, else what the reader said. Every error a file can cause ends here, so a person is told
    what is wrong with the file, never shown a traceback. The readers quote the `paths` the
    loader works in (the download, the staging database): the person sees `name` instead."""
    if isinstance(exc, FileRejected):
        return exc
    over = over_bound(name, exc, limits)
    if over is not None:
        return over
    what = KIND_NAMES.get(kind, kind)
    said = str(exc).strip()
    for path in sorted(paths, key=len, reverse=True):
        said = said.replace(path, name)
    reason = said.splitlines()[0] if said else type(exc).__name__
    return FileRejected(
        f"could not read {name} as {what}: {reason[:300]}",
        hint=f"Check that it is a valid {what} file (open it, or export it again) and upload "
        "it again.",
        engine_message=f"{type(exc).__name__}: {said}"[:_ENGINE_TEXT],
    )
