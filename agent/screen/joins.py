"""Join conditions held to the warehouse's keys (agent/catalog/keys.py), after the gate accepts.

Two mistakes a small model makes run without an error and answer wrong:

- a condition comparing a column with itself (`JOIN products AS p ON p.product_id =
  p.product_id`), true on every row, so every row meets every row. Where exactly one key relates
  the joined table to the tables before it, the condition is re-pointed to it (`oi.product_id =
  p.product_id`), the statement goes through the gate again and the change is among the gate's
  fixes; otherwise it is refused for repair, naming the keys there are (`self_join_condition`).
- a join on columns that are a key of neither table (`sales JOIN orders ON s.customer_id =
  o.customer_id`), which repeats each row of one once per matching row of the other (a fan-out).
  It is judged only where the key map knows both tables well enough: each has a known key, or
  the two columns hold the key of one same third table (`customer_id`, the key of customers).
  Where a key relates the two tables, it is refused naming it (`fan_out_join`); where none is
  known the query may be meant so, and it goes on with a warning for the person approving.

Only equalities of two columns under the top-level AND of an ON (USING as the equalities it
means) between base tables count: a derived table, a CTE, UNNEST, a semi or anti join, a
non-equality or an OR is left alone, so a statement this cannot read is never refused by it.
The re-pointed statement is one this step leaves unchanged, so screening it again (a scheduled
run) gives the same SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from agent.catalog.documentation import JoinKey
from agent.catalog.keys import KeyMap, key_map
from agent.catalog.snapshot import CatalogSnapshot, table_key
from agent.gate import Reason, Verdict, check_sql
from agent.gate.schema import exact_identifier
from agent.gate.schema import table_key as parts_key
from connectors.base import TableInfo

#: The codes of a refused join condition.
SELF_JOIN, FAN_OUT = "self_join_condition", "fan_out_join"

#: Where the original tree's tables and equalities are numbered, to find them from the
#: qualified copy (sqlglot copies `meta` with the node).
_TABLE, _EQ = "querybot_table", "querybot_eq"


def held_to_keys(
    verdict: Verdict,
    snapshot: CatalogSnapshot,
    *,
    row_limit: int | None,
    refuse_fan_out: bool = True,
) -> Verdict:
    """`verdict` (the gate's acceptance over `snapshot`) with its join conditions held to the
    snapshot's keys: re-pointed and checked again, refused, or with a warning added. Without
    `refuse_fan_out` (SQL a person wrote or approved, who may mean it), a fan-out is a warning
    naming the key that would relate the tables."""
    if not verdict.ok or snapshot.gate_schema.empty:
        return verdict
    found = _read(verdict.sql, snapshot)
    if found is None:
        return verdict
    if not refuse_fan_out:
        found.warnings += [r.message for r in found.refused if r.code == FAN_OUT]
        found.refused = [r for r in found.refused if r.code != FAN_OUT]
    if found.refused:
        return replace(verdict, ok=False, reasons=tuple(found.refused))
    if found.rewritten is not None:
        again = check_sql(found.rewritten, snapshot.gate_schema, row_limit=row_limit)
        if not again.ok:
            return again
        fixes = tuple(dict.fromkeys((*verdict.fixes, *again.fixes, *found.fixes)))
        verdict = replace(
            again,
            fixes=fixes,
            row_cap_applied=verdict.row_cap_applied,
            warnings=tuple(dict.fromkeys((*verdict.warnings, *again.warnings))),
        )
    if found.warnings:
        verdict = replace(verdict, warnings=(*verdict.warnings, *found.warnings))
    return verdict


@dataclass
class _Found:
    """What the walk over one statement's joins found."""

    fixes: list[str] = field(default_factory=list)
    refused: list[Reason] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The statement with its conditions re-pointed, when any was.
    rewritten: str | None = None


@dataclass(frozen=True)
class _Source:
    """One table of a FROM: its alias, and the snapshot's table when it is a base table."""

    alias: str
    table: TableInfo | None
    #: Normalised column name -> as the connector spells it.
    columns: dict[str, str]
    #: The table in the statement as written (the one to rewrite), when it is one.
    written: exp.Table | None

    def spelled(self, column: exp.Column) -> str:
        return self.columns.get(column.name, column.name)


def _read(sql: str, snapshot: CatalogSnapshot) -> _Found | None:
    """The joins of `sql` (gated, so fully qualified) against the keys; None when it cannot be
    qualified (the gate has already checked it: nothing is added)."""
    dialect = snapshot.dialect
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        tables = list(tree.find_all(exp.Table))
        equalities = list(tree.find_all(exp.EQ))
        for i, table in enumerate(tables):
            table.meta[_TABLE] = i
        for i, equality in enumerate(equalities):
            equality.meta[_EQ] = i
        qualified = qualify(
            tree.copy(),
            schema=snapshot.gate_schema.mapping,
            dialect=dialect,
            validate_qualify_columns=False,
            quote_identifiers=False,
        )
        scopes = list(traverse_scope(qualified))
    except Exception:  # sqlglot on a statement it cannot scope: nothing to add
        return None
    walk = _Walk(snapshot, key_map(snapshot), tables, equalities)
    for scope in scopes:
        walk.scope(scope)
    found = walk.found
    if found.fixes and not found.refused:
        found.rewritten = tree.sql(dialect=dialect)
    return found


class _Walk:
    """One statement's scopes, join by join: each join's ON against the tables before it in
    the same FROM, rewriting the statement as written (`tables`, `equalities`) where it
    re-points a condition."""

    def __init__(
        self,
        snapshot: CatalogSnapshot,
        keys: KeyMap,
        tables: list[exp.Table],
        equalities: list[exp.EQ],
    ) -> None:
        self.snapshot, self.keys = snapshot, keys
        self.tables, self.equalities = tables, equalities
        self.dialect = Dialect.get_or_raise(snapshot.dialect)
        self.found = _Found()

    def scope(self, scope: Scope) -> None:
        select = scope.expression
        if not isinstance(select, exp.Select) or select.args.get("from_") is None:
            return
        joins: list[exp.Join] = select.args.get("joins") or []
        sources = [self._source(scope, select.args["from_"].this)]
        for join in joins:
            joined = self._source(scope, join.this)
            self._join(join, joined, sources)
            sources.append(joined)

    def _source(self, scope: Scope, node: exp.Expr) -> _Source:
        alias = node.alias_or_name
        source = scope.sources.get(alias)
        if not isinstance(source, exp.Table) or source is not node:
            return _Source(alias, None, {}, None)
        entries, _ = self.snapshot.gate_schema.resolve(
            parts_key(source.parts, self.snapshot.dialect)
        )
        table = self.keys.table(entries[0].name) if len(entries) == 1 else None
        index = source.meta.get(_TABLE)
        written = self.tables[index] if isinstance(index, int) else None
        columns = dict(entries[0].columns) if table is not None else {}
        return _Source(alias, table, columns, written)

    def _join(self, join: exp.Join, joined: _Source, before: list[_Source]) -> None:
        condition = join.args.get("on")
        if condition is None or join.kind in ("SEMI", "ANTI") or join.method:
            return
        condition = condition.unnest()
        parts = (
            [p.unnest() for p in condition.flatten()]
            if isinstance(condition, exp.And)
            else [condition]
        )
        by_alias = {s.alias: s for s in before}
        same: list[exp.EQ] = []
        pairs: dict[str, list[tuple[str, str]]] = {}  # earlier alias -> (its column, joined's)
        for part in parts:
            if not isinstance(part, exp.EQ):
                continue
            left, right = part.this, part.expression
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                continue
            if left.table == right.table and left.name == right.name and left.table:
                same.append(part)
                continue
            if right.table == joined.alias:
                left, right = right, left
            earlier = by_alias.get(right.table)
            if left.table == joined.alias and earlier is not None:
                pairs.setdefault(earlier.alias, []).append(
                    (earlier.spelled(right), joined.spelled(left))
                )
        for index, part in enumerate(same):
            keyed = self._self_condition(part, joined, before, alone=index == 0 and len(same) == 1)
            if keyed is not None:
                pairs.setdefault(keyed[0], []).append(keyed[1:])
        for alias, columns in pairs.items():
            self._fan_out(joined, by_alias[alias], columns)

    def _self_condition(
        self, part: exp.EQ, joined: _Source, before: list[_Source], *, alone: bool
    ) -> tuple[str, str, str] | None:
        """Re-point `part` (a column compared with itself) to the one link between `joined` and
        the tables before it (`alone`: the join's only such condition), or refuse it. Returns
        the equality put in its place, as (earlier alias, its column, joined's column)."""
        index = part.meta.get(_EQ)
        written = self.equalities[index] if isinstance(index, int) else None
        text = (written or part).sql(dialect=self.dialect)
        lead = f"The join condition {text} compares a column with itself, so it joins every row"
        table = joined.table
        if table is None or any(s.table is None for s in before):
            why = (
                f"{lead} of {joined.alias} to every row before it; write the condition that "
                "relates it to the tables before it."
            )
            self.found.refused.append(Reason(SELF_JOIN, why))
            return None
        candidates = [
            (source, link)
            for source in before
            if source.table is not None and table_key(source.table.name) != table_key(table.name)
            for link in self.keys.links(source.table.name, table.name)
        ]
        # the relation through the column written, when it has one
        named = [(s, link) for s, link in candidates if _through(part.this, joined, s, link)]
        chosen = named if len(named) == 1 else candidates
        if len(chosen) == 1 and alone and written is not None:
            source, link = chosen[0]
            if source.written is not None and joined.written is not None:
                return self._repoint(written, text, source, joined, link)
        target = table.short_name
        if len(candidates) > 1:
            keys = "; ".join(str(link) for _, link in candidates[:5])
            why = (
                f"{lead} of {target} to every row before it. Several keys relate {target} to "
                f"the tables before it ({keys}): join on the one you mean."
            )
        elif candidates:
            why = f"{lead} of {target} to every row before it. Join on {candidates[0][1]}."
        else:
            why = f"{lead} of {target} to every row before it. {self._no_key(table, before)}"
        self.found.refused.append(Reason(SELF_JOIN, why))
        return None

    def _repoint(
        self, written: exp.EQ, text: str, source: _Source, joined: _Source, link: JoinKey
    ) -> tuple[str, str, str]:
        """Put `link` in place of `written` (in the statement as written), as a fix."""
        assert source.table is not None and joined.table is not None
        assert source.written is not None and joined.written is not None
        if table_key(link.table) == table_key(source.table.name):
            theirs, ours = link.column, link.other_column
        else:
            theirs, ours = link.other_column, link.column
        written.replace(
            exp.EQ(
                this=exp.column(exact_identifier(theirs, self.dialect), _name(source.written)),
                expression=exp.column(exact_identifier(ours, self.dialect), _name(joined.written)),
            )
        )
        said = f"{source.table.short_name}.{theirs} = {joined.table.short_name}.{ours}"
        self.found.fixes.append(
            f"join condition {text} compared a column with itself; joined on {said}"
        )
        return source.alias, theirs, ours

    def _no_key(self, table: TableInfo, before: list[_Source]) -> str:
        """What to join instead where no key relates `table` to those `before` it: their keys,
        and the tables `table` does relate to."""
        earlier = [s.table for s in before if s.table is not None]
        names = ", ".join(dict.fromkeys(t.short_name for t in earlier))
        text = f"No key known relates {table.short_name} to {names}"
        keys = [
            f"{t.short_name}.{k}" for t in (table, *earlier) for k in self.keys.keys(t.name)[:2]
        ]
        if keys:
            text += f" (their keys: {', '.join(dict.fromkeys(keys))})"
        others = self.keys.neighbours(table.name)
        if others:
            text += f"; {table.short_name} relates to other tables on " + ", ".join(
                map(str, others)
            )
        return text + "."

    def _fan_out(self, joined: _Source, earlier: _Source, columns: list[tuple[str, str]]) -> None:
        """Refuse or flag the join of `joined` to `earlier` on `columns` (earlier's, joined's)
        when none of them is a key of its table."""
        one, other = earlier.table, joined.table
        if one is None or other is None:
            return
        keys = self.keys
        if any(keys.is_key(one.name, a) or keys.is_key(other.name, b) for a, b in columns):
            return
        both_keyed = bool(keys.keys(one.name)) and bool(keys.keys(other.name))
        shared = any(
            set(keys.referenced(one.name, a)) & set(keys.referenced(other.name, b))
            for a, b in columns
        )
        if not (both_keyed or shared):
            return
        on = " and ".join(f"{one.short_name}.{a} = {other.short_name}.{b}" for a, b in columns)
        said = (
            f"{other.short_name} is joined to {one.short_name} on {on}, a key of neither table, so "
            "each row of one is repeated once for every matching row of the other (a fan-out)"
        )
        links = keys.links(one.name, other.name)
        if links:
            keyed = " or ".join(str(link) for link in links[:3])
            self.found.refused.append(Reason(FAN_OUT, f"{said}. Join them on {keyed} instead."))
        else:
            self.found.warnings.append(
                f"{said}; no key relating them is known, so check that sums and counts are not "
                "multiplied by it."
            )


def _through(column: exp.Expr, joined: _Source, source: _Source, link: JoinKey) -> bool:
    """Whether `link` (between `source` and `joined`) has `column` (written as `alias.name`)
    as one of its sides."""
    if not isinstance(column, exp.Column):
        return False
    owner = {source.alias: source, joined.alias: joined}.get(column.table)
    return (
        owner is not None
        and owner.table is not None
        and link.has(owner.table.name, owner.spelled(column))
    )


def _name(table: exp.Table) -> exp.Identifier:
    """What a column names `table` by in the statement: its alias, else its own name."""
    alias = table.args.get("alias")
    ident = alias.this if alias is not None else table.this
    return ident.copy()
