"""A dbt `catalog.json` (written by `dbt docs generate`) added to the manifest's documentation:
what the warehouse itself holds about the relations dbt built.

From each node and source: the table's and its columns' comments, where the project gives no
description of its own (a comment set in the warehouse, `persist_docs`, or a table's COMMENT ON
that the connector's role cannot read), and its row count where the adapter reports one in
`stats` (`row_count` on Snowflake, `num_rows` on BigQuery; DuckDB and PostgreSQL report none).
Column types are not read: the connector lists them as the warehouse has them now. An entry that
does not have the expected shape is skipped, never fatal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agent.catalog.documentation import ColumnDoc, Documentation, TableDoc
from agent.catalog.profiling import table_key

#: The `stats` entries adapters report a table's rows in.
_ROW_STATS = ("row_count", "num_rows", "rows")


def _text(value: Any) -> str:
    return str(value).strip() if isinstance(value, str) else ""


def _row_count(stats: Any) -> int | None:
    if not isinstance(stats, Mapping):
        return None
    for key in _ROW_STATS:
        stat = stats.get(key)
        value = stat.get("value") if isinstance(stat, Mapping) else None
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return int(value)
    return None


def _relation(metadata: Mapping[str, Any]) -> str:
    return ".".join(str(metadata[k]) for k in ("database", "schema", "name") if metadata.get(k))


def _with_entry(old: TableDoc | None, relation: str, entry: Mapping[str, Any]) -> TableDoc:
    metadata = entry.get("metadata")
    table = old or TableDoc(relation=relation)
    comment = _text(metadata.get("comment")) if isinstance(metadata, Mapping) else ""
    columns = dict(table.columns)
    for name, column in (entry.get("columns") or {}).items():
        said = _text(column.get("comment")) if isinstance(column, Mapping) else ""
        key = str(name).lower()
        kept = columns.get(key, ColumnDoc())
        if said and not kept.description:
            columns[key] = replace(kept, description=said)
    return replace(
        table,
        description=table.description or comment,
        columns=columns,
        row_count=_row_count(entry.get("stats")),
    )


def add_catalog(documentation: Documentation, catalog: Mapping[str, Any]) -> Documentation:
    """`documentation` with what `catalog` (a parsed catalog.json) adds (module docstring)."""
    tables = dict(documentation.tables)
    for group in ("nodes", "sources"):
        entries = catalog.get(group)
        for entry in entries.values() if isinstance(entries, Mapping) else ():
            metadata = entry.get("metadata") if isinstance(entry, Mapping) else None
            if not isinstance(metadata, Mapping) or not _relation(metadata):
                continue
            relation = _relation(metadata)
            key = documentation.key_for(relation) or table_key(relation)
            tables[key] = _with_entry(tables.get(key), relation, entry)
    return replace(documentation, tables=tables)
