"""Which columns are keys of a table (one row per value), and which key pairs relate two tables.

Read from what the catalog already holds, no query: the team's documentation (a dbt
relationships test's `to` column, a semantic model's primary entity), a profile whose distinct
count is the table's row count (every row a different non-null value), and names: `id`, or the
table's singular name and `_id` (`orders.order_id`, `order_items.order_item_id`). The connectors
report no declared primary keys, so none are read.

A table relates to another through a column holding the other's key: documented (a relationships
test, a foreign entity), or a column named as that key (`sales.order_id` -> `orders.order_id`),
or named after the other table when its key is a bare `id` (`sales.customer_id` ->
`customers.id`). Joined on such a pair, each row of the first meets at most one row of the
other. Screening checks join conditions against them (agent/screen/joins.py).
"""

from __future__ import annotations

from functools import cached_property

from agent.catalog.documentation import JoinKey
from agent.catalog.retrieval import words
from agent.catalog.snapshot import CatalogSnapshot, table_key
from connectors.base import TableInfo


class KeyMap:
    """The keys of a snapshot's tables and the links between them, each table's keys worked out
    once when first asked. Build it with `key_map` (one per snapshot)."""

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        self.snapshot = snapshot
        self._keys: dict[str, tuple[str, ...]] = {}
        self._referenced: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}

    def table(self, name: str) -> TableInfo | None:
        return self.snapshot.by_key.get(table_key(name))

    def keys(self, name: str) -> tuple[str, ...]:
        """The key columns of table `name`, spelled as the connector spells them (none for a
        table the snapshot lacks)."""
        key = table_key(name)
        found = self._keys.get(key)
        if found is None:
            table = self.snapshot.by_key.get(key)
            found = self._keys[key] = self._keys_of(table) if table is not None else ()
        return found

    def is_key(self, table: str, column: str) -> bool:
        return column.casefold() in {k.casefold() for k in self.keys(table)}

    def links(self, one: str, other: str) -> tuple[JoinKey, ...]:
        """The links between tables `one` and `other`, either way, each pair of columns once."""
        first, second = self.table(one), self.table(other)
        if first is None or second is None:
            return ()
        found: dict[frozenset[tuple[str, str]], JoinKey] = {}
        for link in (  # the documented first: what the team wrote says where it was read
            *self._documented(first, second),
            *self._documented(second, first),
            *self._named(first, second),
            *self._named(second, first),
        ):
            sides = frozenset(
                {
                    (table_key(link.table), link.column.casefold()),
                    (table_key(link.other), link.other_column.casefold()),
                }
            )
            found.setdefault(sides, link)
        return tuple(found.values())

    def referenced(self, table: str, column: str) -> frozenset[tuple[str, str]]:
        """The keys of other tables that `table.column` holds, as (table key, column) in lower
        case: `sales.customer_id` holds customers' `customer_id`."""
        found = self._referenced.get((table_key(table), column.casefold()))
        if found is not None:
            return found
        held = frozenset(
            (table_key(link.other), link.other_column.casefold())
            for other in self.snapshot.tables
            for link in self._named_or_documented(table, other.name)
            if table_key(link.table) == table_key(table) and link.has(table, column)
        )
        self._referenced[(table_key(table), column.casefold())] = held
        return held

    def _named_or_documented(self, table: str, other: str) -> list[JoinKey]:
        """The links from `table` to a key of `other` (one way: `links` gives both)."""
        one, two = self.table(table), self.table(other)
        if one is None or two is None:
            return []
        return [*self._named(one, two), *self._documented(one, two)]

    def neighbours(self, name: str, limit: int = 3) -> tuple[JoinKey, ...]:
        """Up to `limit` links between `name` and any other table, in the snapshot's order."""
        found: list[JoinKey] = []
        for table in self.snapshot.tables:
            if table_key(table.name) != table_key(name):
                found.extend(self.links(name, table.name))
            if len(found) >= limit:
                break
        return tuple(found[:limit])

    def _keys_of(self, table: TableInfo) -> tuple[str, ...]:
        found = {c.casefold() for c in self._documented_keys.get(table_key(table.name), ())}
        profile = self.snapshot.profile(table.name)
        rows = profile.row_count if profile and profile.row_count is not None else table.row_count
        if profile is not None and rows is not None and rows > 1:
            found |= {c.casefold() for c, p in profile.columns.items() if p.distinct == rows}
        named = [*words(table.short_name), "id"]
        for column in table.columns:
            if column.name.casefold() == "id" or (len(named) > 1 and words(column.name) == named):
                found.add(column.name.casefold())
        return tuple(c.name for c in table.columns if c.name.casefold() in found)

    def _named(self, table: TableInfo, other: TableInfo) -> list[JoinKey]:
        """The columns of `table` named as a key of `other`: the same name (a bare `id` is no
        one's foreign key), or the other's singular name and `_id` where its key is `id`."""
        if table_key(table.name) == table_key(other.name):
            return []  # a column equal to itself is no relation
        keys = self.keys(other.name)
        spelled = {k.casefold(): k for k in keys}
        singular = [*words(other.short_name), "id"]
        out = []
        for column in table.columns:
            name = column.name.casefold()
            if name in spelled and name != "id":
                out.append(JoinKey(table.name, column.name, other.name, spelled[name], "names"))
            elif "id" in spelled and len(singular) > 1 and words(column.name) == singular:
                out.append(JoinKey(table.name, column.name, other.name, spelled["id"], "names"))
        return out

    def _documented(self, table: TableInfo, other: TableInfo) -> list[JoinKey]:
        return [
            JoinKey(
                table.name,
                _spelled(table, j.column),
                other.name,
                _spelled(other, j.other_column),
                j.source,
            )
            for j in self._documented_links.get((table_key(table.name), table_key(other.name)), ())
        ]

    @cached_property
    def _documented_links(self) -> dict[tuple[str, str], list[JoinKey]]:
        """The documentation's join keys between the snapshot's tables, by (table, other) key;
        each JoinKey here names the documented columns as written."""
        documentation = self.snapshot.documentation
        if not documentation:
            return {}
        names: dict[str, str] = {}
        for table in self.snapshot.tables:
            documented = documentation.key_for(table.name)
            if documented is not None:
                names.setdefault(documented, table_key(table.name))
        out: dict[tuple[str, str], list[JoinKey]] = {}
        for join in documentation.joins:
            one, other = (
                names.get(documentation.key_for(n) or "") for n in (join.table, join.other)
            )
            if one is not None and other is not None:
                link = JoinKey(one, join.column, other, join.other_column, join.source)
                out.setdefault((one, other), []).append(link)
        return out

    @cached_property
    def _documented_keys(self) -> dict[str, list[str]]:
        """The documented key columns (the `to` side of each join key), by table key."""
        out: dict[str, list[str]] = {}
        for links in self._documented_links.values():
            for link in links:
                out.setdefault(link.other, []).append(link.other_column)
        return out


def _spelled(table: TableInfo, column: str) -> str:
    """`column` as `table` spells it (documentation may write it in another case)."""
    return next((c.name for c in table.columns if c.name.casefold() == column.casefold()), column)


def key_map(snapshot: CatalogSnapshot) -> KeyMap:
    """The snapshot's key map, made once per snapshot. It is kept where `cached_property` keeps
    the snapshot's own derived values (its `__dict__`), so it lives and goes with the snapshot,
    and a snapshot with other profiles (`with_profiles`) gets its own."""
    held = snapshot.__dict__.get(_HELD)
    if isinstance(held, KeyMap):
        return held
    made: KeyMap = snapshot.__dict__.setdefault(_HELD, KeyMap(snapshot))
    return made


_HELD = "_querybot_key_map"
