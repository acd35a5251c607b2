"""What a team wrote down about its warehouse, beside what the engine itself says: descriptions
of tables and columns, the values a column may hold, and the keys tables join on.

It comes from a dbt project's artifacts (`manifest.json`, `catalog.json` and
`semantic_manifest.json`) and reaches the model through the catalog's usual paths: `annotate` puts
the descriptions (and row counts dbt saw) on the tables the connector lists (so the prompt's
CREATE TABLE comments and the search index carry them), `values` gives a column's known value
list (shown in the prompt and used by grounding's "did you mean" when no scan gave the real one),
and `joins` names join keys (join neighbours for retrieval, and a note on the column in the
prompt).

Names are warehouse relations as dbt built them (`"shop"."main"."fct_orders"`); they are matched
to the connector's tables by the parts both names have (`same_table`): a connector that leaves out
the database (`main.fct_orders`) still finds its model, one whose schema differs does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

from agent.catalog.profiling import table_key
from connectors.base import ColumnInfo, TableInfo


def same_table(one: str, other: str) -> bool:
    """Whether two qualified names can mean the same table: equal in every trailing part both
    have (`shop.main.t` and `main.t` can; `shop.main.t` and `shop.staging.t` cannot)."""
    a, b = table_key(one).split("."), table_key(other).split(".")
    n = min(len(a), len(b))
    return a[-n:] == b[-n:]


def warehouse_table(relation: str, tables: Iterable[TableInfo]) -> str | None:
    """The name of the one table in `tables` that dbt's `relation` means (its whole name, else
    `same_table`), or None."""
    key = table_key(relation)
    names = [t.name for t in tables]
    exact = [name for name in names if table_key(name) == key]
    found = exact or [name for name in names if same_table(name, key)]
    return found[0] if len(found) == 1 else None


def meta_text(meta: Iterable[tuple[str, str]]) -> str:
    """`meta` as a short note: `unit: EUR; owner: sales`."""
    return "; ".join(f"{k}: {v}" for k, v in meta)


@dataclass(frozen=True)
class ColumnDoc:
    description: str = ""
    #: Every value the column may hold (a dbt `accepted_values` test), in the order written.
    values: tuple[str, ...] = ()
    #: Free key/values kept from the project (dbt `meta`), as text.
    meta: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TableDoc:
    #: The relation it describes, as the project names it (`"shop"."main"."fct_orders"`).
    relation: str
    description: str = ""
    #: The name the team knows it by (the dbt model's), when it is not the relation's last part.
    model: str = ""
    #: By lower-case column name.
    columns: Mapping[str, ColumnDoc] = field(default_factory=dict)
    meta: tuple[tuple[str, str], ...] = ()
    #: Its rows when dbt last looked (catalog.json's stats), where the adapter reports them.
    row_count: int | None = None


@dataclass(frozen=True)
class JoinKey:
    """`table.column` holds values of `other.other_column` (a foreign key and what it names):
    documented (agent.semantic), or inferred from names (agent.catalog.keys)."""

    table: str
    column: str
    other: str
    other_column: str
    #: Where it was read: `relationships test`, `entity customer`, `names`.
    source: str = ""

    def note(self) -> str:
        return f"joins {table_key(self.other).rsplit('.', 1)[-1]}.{self.other_column}"

    def __str__(self) -> str:
        one, other = (t.rsplit(".", 1)[-1] for t in (self.table, self.other))
        return f"{one}.{self.column} = {other}.{self.other_column}"

    def has(self, table: str, column: str) -> bool:
        """Whether `table.column` is one of its two sides."""
        wanted = (table_key(table), column.casefold())
        return wanted in {
            (table_key(self.table), self.column.casefold()),
            (table_key(self.other), self.other_column.casefold()),
        }


@dataclass(frozen=True)
class Documentation:
    """Documented tables by relation key, and join keys. Immutable; equal when the text is."""

    tables: Mapping[str, TableDoc] = field(default_factory=dict)
    joins: tuple[JoinKey, ...] = ()
    #: Where it came from, for logs and "how did you get this" (`dbt project shop`).
    source: str = ""

    def __bool__(self) -> bool:
        return bool(self.tables or self.joins)

    @cached_property
    def _by_last_part(self) -> dict[str, list[str]]:
        """The table name (last part) of each documented relation -> their keys."""
        out: dict[str, list[str]] = {}
        for key in self.tables:
            out.setdefault(key.rsplit(".", 1)[-1], []).append(key)
        return out

    def key_for(self, name: str) -> str | None:
        """The documented relation a warehouse table name means (`same_table`, and only one),
        or None."""
        key = table_key(name)
        if key in self.tables:
            return key
        found = [
            k for k in self._by_last_part.get(key.rsplit(".", 1)[-1], []) if same_table(k, key)
        ]
        return found[0] if len(found) == 1 else None

    def table(self, name: str) -> TableDoc | None:
        key = self.key_for(name)
        return self.tables[key] if key is not None else None

    def column(self, table: str, column: str) -> ColumnDoc | None:
        doc = self.table(table)
        return doc.columns.get(column.lower()) if doc is not None else None

    def values(self, table: str, column: str) -> tuple[str, ...]:
        """The column's documented value list (empty when none is)."""
        doc = self.column(table, column)
        return doc.values if doc is not None else ()

    def joins_of(self, table: str) -> list[JoinKey]:
        """The join keys whose foreign-key side is `table`."""
        key = self.key_for(table)
        return [j for j in self.joins if key is not None and self.key_for(j.table) == key]

    def annotate(self, tables: Iterable[TableInfo]) -> tuple[TableInfo, ...]:
        """`tables` with the documented descriptions: the project's wins where it has one (it
        is what the team maintains), with the model's name and `meta` as notes; the row count
        dbt's catalog saw where the connector gives none."""
        return tuple(self._annotate(t) for t in tables)

    def _annotate(self, table: TableInfo) -> TableInfo:
        doc = self.table(table.name)
        if doc is None:
            return table
        notes = [
            f"(dbt model {doc.model})" if doc.model and doc.model != table.short_name else "",
            f"({meta_text(doc.meta)})" if doc.meta else "",
        ]
        description = " ".join(p for p in (doc.description or table.description, *notes) if p)
        columns = tuple(self._column(c, doc.columns.get(c.name.lower())) for c in table.columns)
        rows = table.row_count if table.row_count is not None else doc.row_count
        return replace(table, description=description, columns=columns, row_count=rows)

    @staticmethod
    def _column(column: ColumnInfo, doc: ColumnDoc | None) -> ColumnInfo:
        if doc is None:
            return column
        text = doc.description or column.description
        if doc.meta:
            text = " ".join(p for p in (text, f"({meta_text(doc.meta)})") if p)
        return replace(column, description=text) if text != column.description else column


#: No documentation: what a catalog without a project uses.
NONE = Documentation()
