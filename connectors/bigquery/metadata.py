"""Tables, columns, descriptions and storage layout from a dataset's INFORMATION_SCHEMA.

One query per dataset (TABLES, TABLE_OPTIONS, COLUMNS and COLUMN_FIELD_PATHS joined), never one
per table, so a dataset of a thousand tables costs one small job; results are kept for a TTL.
Nested STRUCT fields are not separate columns (a query names them `col.field`): they are listed
in their column's description, so the model sees them and the gate's schema stays top-level.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from connectors.base import ColumnInfo, TableInfo
from connectors.bigquery.sql import Layout

#: Nested fields listed per column before "and N more" (a GA4 export has hundreds).
MAX_NESTED_FIELDS = 40

_FIELDS_SELECT = "f.field_path, f.data_type AS field_type, f.description"
_FIELDS_JOIN = """
LEFT JOIN {ds}.INFORMATION_SCHEMA.COLUMN_FIELD_PATHS AS f
  ON f.table_name = c.table_name AND f.column_name = c.column_name"""
#: For endpoints without COLUMN_FIELD_PATHS (the local emulator): no descriptions, no nesting.
_NO_FIELDS_SELECT = (
    "c.column_name AS field_path, c.data_type AS field_type, CAST(NULL AS STRING) AS description"
)

_METADATA_SQL = """
SELECT
  t.table_name, o.option_value AS table_description,
  c.column_name, c.ordinal_position, c.data_type AS column_type,
  c.is_partitioning_column, c.clustering_ordinal_position,
  {fields}
FROM {ds}.INFORMATION_SCHEMA.TABLES AS t
LEFT JOIN {ds}.INFORMATION_SCHEMA.TABLE_OPTIONS AS o
  ON o.table_name = t.table_name AND o.option_name = 'description'
LEFT JOIN {ds}.INFORMATION_SCHEMA.COLUMNS AS c
  ON c.table_name = t.table_name{join}
ORDER BY t.table_name, c.ordinal_position, field_path
"""


def metadata_sql(project: str, dataset: str, *, field_paths: bool = True) -> str:
    """The one metadata query for a dataset (names are validated by the connector)."""
    ds = f"`{project}.{dataset}`"
    return _METADATA_SQL.format(
        ds=ds,
        fields=_FIELDS_SELECT if field_paths else _NO_FIELDS_SELECT,
        join=_FIELDS_JOIN.format(ds=ds) if field_paths else "",
    )


def row_counts_sql(project: str, dataset: str) -> str:
    """The row count of every table of a dataset, from its `__TABLES__` meta-table: storage
    metadata BigQuery keeps and bills nothing to read (`type` 1: tables, not views)."""
    return f"SELECT table_id, row_count FROM `{project}.{dataset}.__TABLES__` WHERE type = 1"


@dataclass(frozen=True)
class DatasetMetadata:
    """One dataset's tables, and the layout of each (keyed `(project, dataset, table)`)."""

    tables: tuple[TableInfo, ...]
    layouts: Mapping[tuple[str, str, str], Layout]


@dataclass
class _Table:
    description: str = ""
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    partition: str | None = None
    clustering: dict[int, str] = field(default_factory=dict)


def assemble(project: str, dataset: str, rows: Iterable[Mapping[str, Any]]) -> DatasetMetadata:
    """Turn the metadata query's rows (one per field path) into tables and layouts."""
    tables: dict[str, _Table] = {}
    for row in rows:
        table = tables.setdefault(row["table_name"], _Table())
        table.description = _unquote(row["table_description"])
        column = row["column_name"]
        if column is None:
            continue
        if row["is_partitioning_column"] == "YES":
            table.partition = column
        if row["clustering_ordinal_position"] is not None:
            table.clustering[int(row["clustering_ordinal_position"])] = column
        if row["ordinal_position"] is None:  # _PARTITIONTIME and other pseudo-columns
            continue
        entry = table.columns.setdefault(
            column, {"type": row["column_type"], "description": "", "fields": []}
        )
        path = row["field_path"] or column
        if path == column:
            entry["description"] = row["description"] or ""
        else:
            entry["fields"].append((path, row["field_type"], row["description"] or ""))
    infos, layouts = [], {}
    for name, table in tables.items():
        clustering = tuple(table.clustering[k] for k in sorted(table.clustering))
        layout = Layout(table.partition, clustering)
        layouts[(project, dataset, name)] = layout
        infos.append(
            TableInfo(
                name=f"{project}.{dataset}.{name}",
                columns=tuple(
                    ColumnInfo(col, e["type"], _with_fields(e["description"], e["fields"]))
                    for col, e in table.columns.items()
                ),
                description=_with_layout(table.description, layout),
            )
        )
    return DatasetMetadata(tables=tuple(infos), layouts=layouts)


class MetadataCache:
    """Per-dataset metadata, loaded on first use and again once older than `ttl_s`."""

    def __init__(self, load: Callable[[str, str], DatasetMetadata], ttl_s: float) -> None:
        self._load = load
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], tuple[float, DatasetMetadata]] = {}

    def get(self, project: str, dataset: str) -> DatasetMetadata:
        key = (project, dataset)
        with self._lock:  # one loader at a time: a burst of questions costs one query
            entry = self._entries.get(key)
            if entry is None or time.monotonic() - entry[0] >= self._ttl_s:
                entry = (time.monotonic(), self._load(project, dataset))
                self._entries[key] = entry
            return entry[1]


def _unquote(option_value: str | None) -> str:
    """TABLE_OPTIONS values are GoogleSQL literals (`"One row per order"`)."""
    if not option_value:
        return ""
    try:
        value = json.loads(option_value)
    except ValueError:
        quoted = len(option_value) > 1 and option_value[0] == option_value[-1] in "'\""
        return option_value[1:-1] if quoted else option_value
    return value if isinstance(value, str) else option_value


def _with_fields(description: str, fields: list[tuple[str, str, str]]) -> str:
    if not fields:
        return description
    listed = [f"{path} {type_}" + (f" ({desc})" if desc else "") for path, type_, desc in fields]
    if len(listed) > MAX_NESTED_FIELDS:
        listed = [*listed[:MAX_NESTED_FIELDS], f"and {len(listed) - MAX_NESTED_FIELDS} more"]
    text = "Fields: " + "; ".join(listed) + "."
    return f"{description} {text}" if description else text


def _with_layout(description: str, layout: Layout) -> str:
    notes = []
    if layout.partition_column:
        notes.append(f"Partitioned by {layout.partition_column}: filter on it to read less.")
    if layout.clustering:
        notes.append(f"Clustered by {', '.join(layout.clustering)}.")
    if description and notes and not description.endswith((".", "!", "?")):
        description += "."
    return " ".join([description, *notes]).strip()
