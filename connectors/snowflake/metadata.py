"""Tables, views and columns of the listed schemas from the database's INFORMATION_SCHEMA, and
what a statement will read from `EXPLAIN USING JSON`.

Two metadata queries per load whatever the number of tables (TABLES: kind, comment, row count,
bytes; COLUMNS: name, type, comment), never one per table. A table is listed from its columns,
so a view that TABLES leaves out (fakesnow does) is still there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connectors.base import ColumnInfo, QueryFailed, TableInfo
from connectors.units import byte_size, counted


def quoted(identifier: str) -> str:
    """`identifier` as a quoted Snowflake identifier (names are validated, quotes doubled)."""
    return '"' + identifier.replace('"', '""') + '"'


def tables_sql(database: str, schemas: Sequence[str]) -> str:
    marks = ", ".join(["%s"] * len(schemas))
    return (
        "SELECT table_schema, table_name, table_type, comment, row_count, bytes "
        f"FROM {quoted(database)}.INFORMATION_SCHEMA.TABLES WHERE table_schema IN ({marks})"
    )


def columns_sql(database: str, schemas: Sequence[str]) -> str:
    marks = ", ".join(["%s"] * len(schemas))
    return (
        "SELECT table_schema, table_name, column_name, ordinal_position, data_type, comment "
        f"FROM {quoted(database)}.INFORMATION_SCHEMA.COLUMNS WHERE table_schema IN ({marks}) "
        "ORDER BY table_schema, table_name, ordinal_position"
    )


@dataclass(frozen=True)
class Stored:
    """What TABLES says of one table or view."""

    kind: str = "BASE TABLE"
    comment: str = ""
    row_count: int | None = None
    bytes: int | None = None


def assemble(
    database: str,
    tables: Iterable[Sequence[Any]],
    columns: Iterable[Sequence[Any]],
) -> tuple[TableInfo, ...]:
    """Tables named `DATABASE.SCHEMA.TABLE`, from the rows of `tables_sql` and `columns_sql`."""
    stored = {
        (schema, name): Stored(str(kind or "BASE TABLE"), comment or "", _int(rows), _int(size_))
        for schema, name, kind, comment, rows, size_ in tables
    }
    listed: dict[tuple[str, str], list[ColumnInfo]] = {}
    for schema, table, column, _position, data_type, comment in columns:
        listed.setdefault((schema, table), []).append(
            ColumnInfo(str(column), str(data_type), comment or "")
        )
    infos = []
    for key in sorted(listed):
        about = stored.get(key, Stored(kind="VIEW"))
        infos.append(
            TableInfo(
                name=f"{database}.{key[0]}.{key[1]}",
                columns=tuple(listed[key]),
                description=_description(about),
                row_count=about.row_count if about.kind != "VIEW" else None,
            )
        )
    return tuple(infos)


def _description(about: Stored) -> str:
    notes = [about.comment.rstrip()] if about.comment else []
    if notes and not notes[0].endswith((".", "!", "?")):
        notes[0] += "."
    if about.kind == "VIEW":
        notes.append("A view.")
    elif about.bytes:
        notes.append(f"{byte_size(about.bytes)} stored.")
    return " ".join(notes)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class Plan:
    """What EXPLAIN says a statement will read: micro-partitions and bytes assigned to the
    scan, against the partitions of the tables it reads."""

    partitions_total: int
    partitions_assigned: int
    bytes_assigned: int

    @property
    def prunes(self) -> bool:
        """Whether the scan skips any partition (a filter on how the table is clustered)."""
        return self.partitions_assigned < self.partitions_total


def plan(explained: str) -> Plan:
    """The global figures of `EXPLAIN USING JSON`'s one value."""
    try:
        stats = json.loads(explained)["GlobalStats"]
        return Plan(
            int(stats["partitionsTotal"]),
            int(stats["partitionsAssigned"]),
            int(stats["bytesAssigned"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise QueryFailed(
            f"Snowflake's EXPLAIN gave no figures this bot can read: {exc}",
            engine_message=str(explained)[:500],
        ) from exc


#: Credits an hour a standard warehouse uses while it runs, by its size as SHOW WAREHOUSES
#: writes it (Snowflake's "Warehouse considerations" table); billed by the second, 60 s at least.
CREDITS_PER_HOUR: Mapping[str, int] = {
    "X-SMALL": 1,
    "SMALL": 2,
    "MEDIUM": 4,
    "LARGE": 8,
    "X-LARGE": 16,
    "2X-LARGE": 32,
    "3X-LARGE": 64,
    "4X-LARGE": 128,
    "5X-LARGE": 256,
    "6X-LARGE": 512,
}


def warehouse_note(warehouse: str, size_: str | None) -> str:
    """One line on what running costs: the warehouse, its size and its credits an hour."""
    if not size_:
        return f"Runs on warehouse {warehouse} (its size is unknown to the bot)."
    credits = CREDITS_PER_HOUR.get(size_.upper().replace("XSMALL", "X-SMALL"))
    rate = f", {counted(credits, 'credit')} an hour while it runs" if credits else ""
    return f"Runs on warehouse {warehouse} ({size_}{rate}; billed by the second, 60 s at least)."


def plan_note(figures: Plan) -> str:
    """One line on what the scan reads, for the card."""
    line = (
        f"Snowflake will read {figures.partitions_assigned:,} of "
        f"{figures.partitions_total:,} micro-partitions ({byte_size(figures.bytes_assigned)})"
    )
    if figures.partitions_total > 1 and not figures.prunes:
        return line + ": every partition, since no filter prunes any."
    return line + "."
