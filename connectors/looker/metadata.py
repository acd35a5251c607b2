"""Looker's LookML model as tables and columns, from the Open SQL Interface's JDBC metadata.

Looker documents what `DatabaseMetaData.getTables` and `getColumns` return
(https://cloud.google.com/looker/docs/sql-interface, "Accessing database metadata"): models are
schemas (`TABLE_SCHEM`), Explores are tables (`TABLE_NAME`, with `LABEL` and `DESCRIPTION`), and
fields are columns named `view.field` (`COLUMN_NAME`), with Looker's own columns `FIELD_LABEL`,
`FIELD_DESCRIPTION`, `FIELD_CATEGORY` (`dimension`/`measure`), `HIDDEN`, `FIELD_ALIAS`,
`DIMENSION_GROUP`, `LOOKER_TYPE` and `IS_GENERATEDCOLUMN` (`YES` for measures). Hidden fields are
left out. A field's category, label and description go into `ColumnInfo.description`, which is
what the model reads; the category comes first, in a fixed form, so the gate can tell measures
(which must be wrapped in `AGGREGATE()`) from dimensions (`is_measure`).

Where a driver lacks Looker's columns (a stand-in database), the standard ones are used:
`REMARKS` for descriptions and `IS_GENERATEDCOLUMN` for the category.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from connectors.base import ColumnInfo, TableInfo

#: How every measure's description starts; `is_measure` reads it back.
MEASURE = "LookML measure, use only inside AGGREGATE()"
DIMENSION = "LookML dimension"

#: `java.sql.Types` codes, for rows without TYPE_NAME.
_JDBC_TYPES = {
    -7: "BOOLEAN",
    -6: "TINYINT",
    -5: "BIGINT",
    1: "CHAR",
    2: "NUMERIC",
    3: "DECIMAL",
    4: "INTEGER",
    5: "SMALLINT",
    6: "FLOAT",
    7: "REAL",
    8: "DOUBLE",
    12: "VARCHAR",
    16: "BOOLEAN",
    91: "DATE",
    92: "TIME",
    93: "TIMESTAMP",
}

Row = Mapping[str, Any]


def is_measure(column: ColumnInfo) -> bool:
    """Whether a column built by `field_column` is a LookML measure."""
    return column.description.startswith(MEASURE)


def truthy(value: Any) -> bool:
    """Looker's TRUE/FALSE columns, whatever type the driver hands them back as."""
    if isinstance(value, str):
        return value.strip().upper() in ("TRUE", "YES", "1", "T", "Y")
    return bool(value)


def field_column(row: Row) -> ColumnInfo | None:
    """One `getColumns` row as a column, or None for a hidden field."""
    if truthy(row.get("HIDDEN")):
        return None
    category = str(row.get("FIELD_CATEGORY") or "").strip().lower()
    if category not in ("dimension", "measure"):
        generated = str(row.get("IS_GENERATEDCOLUMN") or "").strip().upper() == "YES"
        category = "measure" if generated else "dimension"
    type_name = row.get("TYPE_NAME") or _JDBC_TYPES.get(_int(row.get("DATA_TYPE")), "")
    parts = [MEASURE if category == "measure" else DIMENSION]
    label = _text(row.get("FIELD_LABEL"))
    description = _text(row.get("FIELD_DESCRIPTION")) or _text(row.get("REMARKS"))
    if label and description:
        parts.append(f"{label}: {description}")
    elif label or description:
        parts.append(label or description)
    details = []
    if looker_type := _text(row.get("LOOKER_TYPE")):
        details.append(f"type {looker_type}")
    if group := _text(row.get("DIMENSION_GROUP")):
        details.append(f"dimension group {group}")
    if alias := _text(row.get("FIELD_ALIAS")):
        details.append(f"also known as {alias}")
    text = ". ".join(parts)
    if details:
        text += f" ({'; '.join(details)})"
    return ColumnInfo(name=str(row["COLUMN_NAME"]), type=str(type_name), description=text)


def explore_description(row: Row) -> str:
    """An Explore's label and description (`REMARKS` where a driver has no DESCRIPTION)."""
    label = _text(row.get("LABEL"))
    description = _text(row.get("DESCRIPTION")) or _text(row.get("REMARKS"))
    if label and description:
        return f"{label}: {description}"
    return label or description


def assemble(
    table_rows: Iterable[Row], column_rows: Iterable[Row], models: Sequence[str] = ()
) -> list[TableInfo]:
    """The visible fields of every Explore (of `models`, when given) as `model.explore` tables.

    Columns keep Looker's order (`ORDINAL_POSITION`); an Explore whose fields are all hidden
    is left out, as nothing in it can be queried.
    """
    wanted = set(models)
    columns: dict[tuple[str, str], list[tuple[int, ColumnInfo]]] = {}
    for row in column_rows:
        key = (str(row["TABLE_SCHEM"]), str(row["TABLE_NAME"]))
        if wanted and key[0] not in wanted:
            continue
        column = field_column(row)
        if column is not None:
            position = _int(row.get("ORDINAL_POSITION"))
            columns.setdefault(key, []).append((position, column))
    tables = []
    for row in table_rows:
        key = (str(row["TABLE_SCHEM"]), str(row["TABLE_NAME"]))
        if (wanted and key[0] not in wanted) or not columns.get(key):
            continue
        ordered = tuple(c for _, c in sorted(columns[key], key=lambda item: item[0]))
        tables.append(
            TableInfo(name=".".join(key), columns=ordered, description=explore_description(row))
        )
    return tables


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
