"""What an uploaded file is and what its tables and columns are called: its kind (CSV, Parquet,
JSON or SQLite, from magic bytes and name), ASCII names that need no quoting, and
`FileRejected`, the refusal a person sees in the thread.
"""

from __future__ import annotations

import codecs
import csv
import functools
import re
import unicodedata
from pathlib import Path

import sqlglot
from sqlglot import exp

from connectors.base import ConnectorError

FORMATS = "CSV, Parquet, JSON or SQLite"
KIND_NAMES = {"csv": "CSV", "parquet": "Parquet", "json": "JSON", "sqlite": "SQLite"}
CSV_DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "pipes"}

_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".tab": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".ndjson": "json",
    ".jsonl": "json",
    ".sqlite": "sqlite",
    ".sqlite3": "sqlite",
    ".db": "sqlite",
}
_PARQUET_MAGIC = b"PAR1"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Bytes read to tell text from binary data, and to count a CSV header's fields.
_SNIFF_BYTES = 64 * 1024
#: Letters NFKD does not reduce to ASCII.
_TRANSLITERATE = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "ø": "o",
        "Ø": "O",
        "œ": "oe",
        "Œ": "OE",
        "ł": "l",
        "đ": "d",
        "þ": "th",
    }
)


class FileRejected(ConnectorError):
    """An upload the sandbox will not take; `message` says which file and why. `bound` names
    the limit it went over (`columns`, `cells`, `expanded`, `memory`, `time`, `disk`, `size`,
    `rows`, `tables`), "" when it is refused for what it is rather than for its size."""

    def __init__(
        self, message: str, *, hint: str = "", engine_message: str = "", bound: str = ""
    ) -> None:
        super().__init__(message, hint=hint, engine_message=engine_message)
        self.bound = bound


def detect_kind(file: Path, name: str) -> str:
    """csv, parquet, json or sqlite: the file's magic bytes first, then its name's extension."""
    with file.open("rb") as f:
        head = f.read(len(_SQLITE_MAGIC))
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    kind = _EXTENSIONS.get(Path(name).suffix.lower())
    if kind is None:
        raise FileRejected(
            f"{name} is not a {FORMATS} file.",
            hint="Export it as CSV (or Parquet) and upload that.",
        )
    if kind == "csv" and _is_binary(file):
        raise FileRejected(
            f"could not read {name} as CSV: it holds binary data, not text.",
            hint="Check that it really is a CSV file (a spreadsheet must be exported as CSV).",
        )
    return kind


def header_fields(file: Path, *, utf8: bool) -> int:
    """How many fields the first line of a CSV has (at least), read from its first 64 KB with
    its most frequent delimiter: counted before DuckDB's sniffer, whose time and memory grow
    with the square of the number of columns."""
    with file.open("rb") as f:
        head = f.read(_SNIFF_BYTES).decode("utf-8" if utf8 else "latin-1", errors="replace")
    # a line ends at \n, \r\n or a lone \r (old Mac files): the reader refuses a \r in a field
    first = re.split(r"\r\n?|\n", head.lstrip("\ufeff"), maxsplit=1)[0]
    delim = max(CSV_DELIMITERS, key=first.count)
    return len(next(csv.reader([first], delimiter=delim), []))


def identifier(
    text: str, *, fallback: str, reserved: set[str] | frozenset[str] = frozenset()
) -> str:
    """A lower-case ASCII name (`Umsatz Größe 2024` -> `umsatz_grosse_2024`) that needs no
    quoting: letters, digits and underscores, not starting with a digit, not a `reserved` word
    and not one the gate's parser (sqlglot) reads as a keyword (`map`, `between`): those get a
    trailing underscore."""
    ascii_text = (
        unicodedata.normalize("NFKD", text.translate(_TRANSLITERATE))
        .encode("ascii", "ignore")
        .decode("ascii")
    )
    name = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")[:60]
    if not name:
        return fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if name in reserved or not _parses_as_name(name):
        name += "_"
    return name


@functools.lru_cache(maxsize=4096)
def _parses_as_name(name: str) -> bool:
    """Whether sqlglot reads `name` as a plain table and column name in DuckDB's SQL."""
    sql = f"SELECT {name}, COUNT(*) FROM {name} GROUP BY {name} ORDER BY {name}"
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return False
    return isinstance(tree, exp.Select) and tree.sql(dialect="duckdb") == sql


def _is_binary(file: Path) -> bool:
    with file.open("rb") as f:
        return b"\x00" in f.read(_SNIFF_BYTES)


def is_utf8(file: Path) -> bool:
    """Whether the whole file decodes as UTF-8 (else DuckDB is told it is Latin-1)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with file.open("rb") as f:
            while chunk := f.read(1024 * 1024):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True
