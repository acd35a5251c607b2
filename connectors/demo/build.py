"""The demo warehouse: a small online shop's sales over two years, as a DuckDB file.

The shop's history ends on the day before a reference "today" (the real date, or a pinned one):
`ensure_demo` builds it on first use (in about a second) and again when the day it ends on is no
longer the one wanted. The rows come from `connectors.demo.data` on a fixed calendar (START ..
END, see `connectors.demo.shop`) and a fixed seed, then every date is moved by the same number of
days, so the shape of the data never changes, only where it sits in time. The tables and their
comments come from `connectors.demo.schema`.

Which last day a file holds is written beside it (`demo.last-day`), after the file is in place:
a file copied without it, or left by an older build, is simply built again.
"""

from __future__ import annotations

import csv
import os
import random
import re
import tempfile
from datetime import date, timedelta
from pathlib import Path

import duckdb

from connectors.demo.data import SEED, Row, generate
from connectors.demo.schema import TABLES, VIEW_COMMENT, VIEW_COMMENTS, VIEW_NAME, VIEW_SQL
from connectors.demo.shop import END

#: An ISO date in a table or column comment (moved with the data).
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def last_day_for(today: date | None) -> date:
    """The demo's last day seen from `today` (None: the real date): the day before."""
    return (today or date.today()) - timedelta(days=1)


def demo_path(data_dir: Path) -> Path:
    """Where the demo warehouse lives in `data_dir`."""
    return data_dir / "demo.duckdb"


def marker_path(path: Path) -> Path:
    """The file beside the demo at `path` that says which last day it holds."""
    return path.with_suffix(".last-day")


def last_day_of(path: Path) -> date | None:
    """The last day the demo at `path` holds, or None when unknown (missing, older build)."""
    if not path.is_file():
        return None
    try:
        return date.fromisoformat(marker_path(path).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def ensure_demo(data_dir: Path, *, today: date | None = None) -> Path:
    """The demo warehouse in `data_dir`, ending the day before `today` (None: the real date);
    built first when missing or when it ends on another day."""
    data_dir.mkdir(parents=True, exist_ok=True)
    return build_demo(demo_path(data_dir), last_day_for(today))


def build_demo(path: Path, last_day: date) -> Path:
    """Create the demo warehouse at `path`, its history ending on `last_day`, unless it already
    holds that one; return `path`.

    It is built in a temporary directory next to `path` and renamed into place (over a stale
    one), so a reader never sees a half-built file and two processes building at once both end
    with a whole one. A process that still has the stale file open keeps reading it.
    """
    if last_day_of(path) == last_day:
        return path
    shift = last_day - END
    tables = {name: shifted(rows, shift) for name, rows in generate(random.Random(SEED)).items()}
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.", dir=path.parent) as tmp:
        built = Path(tmp) / path.name
        _write(built, tables, shift, staging=Path(tmp))
        os.replace(built, path)
        marker = Path(tmp) / marker_path(path).name
        marker.write_text(last_day.isoformat() + "\n", encoding="utf-8")
        os.replace(marker, marker_path(path))
    return path


def shifted(rows: list[Row], shift: timedelta) -> list[Row]:
    """`rows` with every date moved by `shift`."""
    if not shift:
        return rows
    return [tuple(v + shift if isinstance(v, date) else v for v in row) for row in rows]


def _dated(text: str, shift: timedelta) -> str:
    """A comment with the dates it names moved by `shift`, as the rows were."""
    return _ISO_DATE.sub(lambda m: (date.fromisoformat(m.group()) + shift).isoformat(), text)


def _write(target: Path, tables: dict[str, list[Row]], shift: timedelta, *, staging: Path) -> None:
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
            con.execute(f"COMMENT ON TABLE {table} IS {_quote(_dated(comment, shift))}")
            for name, _, text in columns:
                con.execute(f"COMMENT ON COLUMN {table}.{name} IS {_quote(_dated(text, shift))}")
        con.execute(VIEW_SQL)
        con.execute(f"COMMENT ON VIEW {VIEW_NAME} IS {_quote(_dated(VIEW_COMMENT, shift))}")
        for name, text in VIEW_COMMENTS:
            con.execute(f"COMMENT ON COLUMN {VIEW_NAME}.{name} IS {_quote(_dated(text, shift))}")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
