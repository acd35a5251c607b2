"""What the loader checks in a CSV or TSV upload beyond what DuckDB's reader does: how DuckDB
is told to read it, and rows whose number of fields disagrees with the header.

Python's `csv` module reads the file here, so its own field limit (131,072 bytes by default,
process-wide) is set to the upload's bound on one value, `SandboxLimits.max_field_bytes`: a
longer field is refused with that bound's name (`over_bound`), never a bare `_csv.Error`. The loader
process is a fresh interpreter for one file (`load_bounded`), so setting the process-wide limit
there touches nothing else.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.files import CSV_DELIMITERS, FileRejected

#: DuckDB's own line bound (2 MiB): a line at most this long is always read.
_DUCKDB_LINE = 2 * 1024 * 1024


def scan(file: Path, *, utf8: bool) -> tuple[str, list[Any]]:
    """The `read_csv` call and its parameters. DuckDB's line bound is lifted to the file's
    size: a line cannot be longer than the file (bounded by `max_file_bytes`), and a value too
    long is refused by `max_field_bytes` with its name rather than by DuckDB's "maximum line
    size", which names no setting and quotes the whole line."""
    encoding = "" if utf8 else ", encoding = 'latin-1'"
    line = max(file.stat().st_size + 1, _DUCKDB_LINE)
    return f"read_csv(?, max_line_size = ?{encoding})", [str(file), line]


def hold_fields_to(limits: SandboxLimits) -> None:
    """Python's CSV reader refuses a field over `max_field_bytes` (see the module docstring)."""
    csv.field_size_limit(limits.max_field_bytes)


def check_shape(file: Path, name: str, described: list[tuple[Any, ...]], *, utf8: bool) -> None:
    """DuckDB's sniffer reads a CSV whose rows disagree on their number of fields as one
    text column, and says only that it could not sniff the file when told the delimiter:
    name the first line that does not match the header instead. A field over the bound raises
    `csv.Error`, which `over_bound` names."""
    if len(described) != 1:
        return
    header = str(described[0][0])
    counts = {d: header.count(d) for d in CSV_DELIMITERS}
    delim = max(counts, key=lambda d: counts[d])
    if counts[delim] == 0:
        return  # a genuine one-column file
    encoding = "utf-8-sig" if utf8 else "latin-1"
    with file.open(encoding=encoding, newline="") as f:
        rows = csv.reader(f, delimiter=delim)
        expected = len(next(rows, []))
        for row in rows:
            if row and len(row) != expected:
                raise FileRejected(
                    f"could not read {name} as CSV: line {rows.line_num} has "
                    f"{len(row)} fields but the header has {expected} "
                    f"(separated by {CSV_DELIMITERS[delim]}).",
                    hint="Fix that line (a missing or extra separator, or an unclosed "
                    "quote) or export the file again, and upload it again.",
                )
