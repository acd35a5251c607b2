"""The column check: every column a statement reads must exist in the tables it names.

sqlglot's `qualify` resolves each column against the schema (and fails on an unknown or ambiguous
one); the columns read are then listed as `table.column` pairs for the verdict.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import normalize_name

from agent.gate.parse import ANSI
from agent.gate.schema import GateSchema, TableEntry, exact_identifier, table_key
from agent.gate.source import token_span
from agent.gate.verdict import Reason


@dataclass
class ColumnCheck:
    """Unknown columns (with suggestions), the columns read, and identifiers re-quoted."""

    reasons: list[Reason] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    #: The statement as sqlglot's `qualify` resolved it, when it did.
    qualified: exp.Expr | None = None


def check_columns(tree: exp.Expr, schema: GateSchema, entries: list[TableEntry]) -> ColumnCheck:
    """Qualify a copy of `tree` (tables already rewritten) and list the columns it reads."""
    dialect = schema.dialect
    result = ColumnCheck()
    if _requote_columns(tree, entries, dialect):
        result.fixes.append("re-quoted identifiers")
    moved = _requalify_columns(tree, entries, dialect)
    if moved:
        result.fixes.append("read " + ", ".join(moved) + " from the joined table that has it")
    keys = _qualify_join_keys(tree, entries, dialect)
    if keys:
        result.fixes.append("qualified " + ", ".join(keys) + ", equal in the tables it joins")
    try:
        qualified = qualify(
            tree.copy(),
            schema=schema.mapping,
            dialect=dialect,
            quote_identifiers=False,
            validate_qualify_columns=True,
        )
    except (OptimizeError, SqlglotError) as error:
        result.reasons.append(_column_reason(error, tree, entries, schema.entries))
        return result
    except Exception as error:  # a sqlglot bug on an odd statement: still a failed check
        message = f"Could not check the columns (sqlglot failed: {type(error).__name__})"
        result.reasons.append(Reason("column_check_failed", message))
        return result
    result.columns = _columns_read(qualified, entries, dialect)
    result.qualified = qualified
    return result


def _columns_read(qualified: exp.Expr, entries: list[TableEntry], dialect: str) -> list[str]:
    """The known tables' columns the qualified statement reads, as `table.column`, each once in
    the order first read."""
    by_key = {entry.key: entry for entry in entries}
    columns: list[str] = []
    for scope in traverse_scope(qualified):
        # the scope's own nodes, not `scope.columns`: that climbs to the SELECT from every
        # column, quadratic in a chain's length; a correlated column's source is further out
        for column in scope.find_all(exp.Column):
            owner = scope
            while owner.parent is not None and column.table not in owner.sources:
                owner = owner.parent
            source = owner.sources.get(column.table)
            if not isinstance(source, exp.Table):
                continue
            entry = by_key.get(table_key(tuple(source.parts), dialect))
            if entry is None:
                continue
            name = entry.columns.get(column.name, column.name)  # qualify normalised it
            qualified_name = f"{entry.name}.{name}"
            if qualified_name not in columns:
                columns.append(qualified_name)
    return columns


def _requote_columns(tree: exp.Expr, entries: list[TableEntry], dialect: str) -> bool:
    """Fix column names that match a column or alias only case-blind (`"Region"` for `region`,
    MySQL `GROUP BY MONTH` for the alias `month`)."""
    known = {key for entry in entries for key in entry.columns}
    alias_nodes = [a.args["alias"] for a in tree.find_all(exp.Alias) if a.args.get("alias")]
    alias_names = [a.name for a in alias_nodes]
    aliases = {normalize_name(a, dialect=dialect).name for a in alias_nodes}
    folded: dict[str, set[str]] = {}
    for name in [n for entry in entries for n in entry.columns.values()] + alias_names:
        folded.setdefault(name.casefold(), set()).add(name)
    changed = False
    dialect_obj = Dialect.get_or_raise(dialect)
    for column in list(tree.find_all(exp.Column)):
        ident = column.this
        if not isinstance(ident, exp.Identifier):
            continue
        key = normalize_name(ident, dialect=dialect).name
        if key in known or key in aliases:
            continue
        matches = folded.get(ident.name.casefold(), set())
        if len(matches) == 1:
            ident.replace(exact_identifier(next(iter(matches)), dialect_obj))
            changed = True
    return changed


def _scopes(tree: exp.Expr) -> list[Scope]:
    """The statement's scopes; none for an odd statement sqlglot cannot scope (the column check
    then reports it)."""
    try:
        return list(traverse_scope(tree))
    except Exception:
        return []


def _requalify_columns(tree: exp.Expr, entries: list[TableEntry], dialect: str) -> list[str]:
    """Point `alias.column` at the one other table of the same FROM that has the column, when
    the aliased table lacks it (`oi.product_name` with products joined as `p`: `p.product_name`).

    A small model's commonest slip. Only an unambiguous owner is taken; anything else is left
    for the column check to report. Returns the columns moved, as written.
    """
    by_key = {entry.key: entry for entry in entries}
    moved: list[str] = []
    for scope in _scopes(tree):
        tables = {
            alias: (source, entry)
            for alias, source in scope.sources.items()
            if isinstance(source, exp.Table)
            and (entry := by_key.get(table_key(tuple(source.parts), dialect))) is not None
        }
        for column in list(scope.find_all(exp.Column)):
            read = tables.get(column.table)
            if read is None or _has(read[1], column.name):
                continue
            owners = [source for source, other in tables.values() if _has(other, column.name)]
            if len(owners) == 1:
                moved.append(column.sql(dialect=dialect))
                alias = owners[0].args.get("alias")
                name = alias.this if alias is not None else owners[0].this
                column.set("table", name.copy())
    return list(dict.fromkeys(moved))


def _qualify_join_keys(tree: exp.Expr, entries: list[TableEntry], dialect: str) -> list[str]:
    """Qualify an unqualified column that several joined tables have when the join makes them
    equal (`FROM a JOIN b ON a.k = b.k ... GROUP BY k`): every qualification gives the same value
    on every row, so the first table that has it (the preserved side of a LEFT JOIN) is taken.

    Only equalities in the top-level AND of an inner or LEFT join's ON (or of WHERE) count;
    a RIGHT, FULL or CROSS join, an OR, or an owner not tied by such an equality leaves the column
    for the column check to report as ambiguous. Returns the columns qualified, as written.
    """
    by_key = {entry.key: entry for entry in entries}
    done: list[str] = []
    for scope in _scopes(tree):
        select = scope.expression
        if not isinstance(select, exp.Select) or select.args.get("from_") is None:
            continue
        joins = select.args.get("joins")
        if not joins:
            continue
        order = [select.args["from_"].this, *(join.this for join in joins)]
        owned = {
            table.alias_or_name: entry
            for table in order
            if isinstance(table, exp.Table)
            and (entry := by_key.get(table_key(tuple(table.parts), dialect))) is not None
        }
        if len(owned) < len(order):
            continue  # a derived table or unknown table: its columns are not known here
        equal = _equalities(select, joins)
        for column in list(scope.find_all(exp.Column)):
            if column.table or not isinstance(column.this, exp.Identifier):
                continue
            owners = [alias for alias, entry in owned.items() if _has(entry, column.name)]
            name = column.name.casefold()
            if len(owners) > 1 and all(
                _tied(owners[0], other, name, equal) for other in owners[1:]
            ):
                done.append(column.sql(dialect=dialect))
                column.set("table", exp.to_identifier(owners[0]))
    return list(dict.fromkeys(done))


def _equalities(select: exp.Select, joins: list[exp.Join]) -> set[tuple[str, str, str]]:
    """`(column, alias, alias)` for each `x.c = y.c` that holds on every row the SELECT keeps."""
    conditions = [select.args["where"].this] if select.args.get("where") else []
    for join in joins:
        if join.side in ("RIGHT", "FULL") or join.kind == "CROSS" or join.args.get("using"):
            continue
        if join.args.get("on") is not None:
            conditions.append(join.args["on"])
    pairs: set[tuple[str, str, str]] = set()
    for condition in conditions:
        for part in condition.flatten() if isinstance(condition, exp.And) else [condition]:
            if not isinstance(part, exp.EQ):
                continue
            left, right = part.this, part.expression
            if (
                isinstance(left, exp.Column)
                and isinstance(right, exp.Column)
                and left.table
                and right.table
                and left.name.casefold() == right.name.casefold()
            ):
                name = left.name.casefold()
                pairs |= {(name, left.table, right.table), (name, right.table, left.table)}
    return pairs


def _tied(first: str, other: str, name: str, equal: set[tuple[str, str, str]]) -> bool:
    """Whether `first.name = other.name` follows from the equalities (through other tables)."""
    seen, todo = {first}, [first]
    while todo:
        alias = todo.pop()
        for column, left, right in equal:
            if column == name and left == alias and right not in seen:
                seen.add(right)
                todo.append(right)
    return other in seen


_COLUMN = re.compile(r"Column '(.*?)' could not be resolved(?: for table: '(.*?)')?")
_UNKNOWN = re.compile(r"Unknown column: (\S+)")
_WHERE = re.compile(r"Line: (\d+), Col: (\d+)")
_AMBIGUOUS = re.compile(r"Ambiguous column '(.+?)'")


def _column_reason(
    error: Exception, tree: exp.Expr, entries: list[TableEntry], exposed: tuple[TableEntry, ...]
) -> Reason:
    """What sqlglot's failure means for the author; an unknown column also says which other
    exposed table has it and what joins them, since a small model's usual mistake is reading a
    column from the wrong table (`order_items.product_name`)."""
    message = ANSI.sub("", str(error)).splitlines()[0].strip()
    known = sorted({name for entry in entries for name in entry.columns.values()})
    match = _COLUMN.search(message) or _UNKNOWN.search(message)
    if match:
        name = match.group(1)
        table = match.group(2) if match.re is _COLUMN and match.group(2) else ""
        position = _WHERE.search(message)
        text = f"Unknown column '{name}'" + (f" in '{table}'" if table else "")
        span = None
        if position:  # sqlglot reports where the name ends
            line, end = int(position.group(1)), int(position.group(2))
            text += f" (line {line}, column {max(1, end - len(name) + 1)})"
            span = token_span(tree, line, end)
        owners = [e.name for e in entries if _has(e, name)]
        if len(owners) > 1:
            message = f"Column '{name}' is ambiguous: {', '.join(owners)} all have it"
            hint = "qualify it with a table or alias"
            return Reason("ambiguous_column", f"{message}; {hint}", span=span)
        qualifiers = sorted(
            {
                c.table
                for c in tree.find_all(exp.Column)
                if c.table and c.name.casefold() == name.casefold()
            }
        )
        if owners and qualifiers:  # read through the alias of a table that lacks it
            wrong = ", ".join(f"'{q}'" for q in qualifiers)
            where = (
                f"it is a column of {owners[0]}, not of {wrong}: qualify it with that table's alias"
            )
            return Reason("unknown_column", f"{text}; {where}", span=span)
        read = _read_through(tree, entries, qualifiers) or entries
        elsewhere = [e for e in exposed if e not in entries and _has(e, name)]
        if not owners and elsewhere:
            where = _where_it_is(name, elsewhere, entries)
            return Reason("unknown_column", f"{text}; {_columns_of(read)}; {where}", span=span)
        close = [c for c in difflib.get_close_matches(name, known, n=2, cutoff=0.6) if c != name]
        suggestion = close[0] if close else ""
        return Reason("unknown_column", f"{text}; {_columns_of(read)}", suggestion, span)
    if _AMBIGUOUS.search(message):
        hint = "qualify the column with its table or alias"
        return Reason("ambiguous_column", f"{message}; {hint}")
    return Reason("column_check_failed", f"Could not check the columns: {message}")


def _read_through(
    tree: exp.Expr, entries: list[TableEntry], qualifiers: list[str]
) -> list[TableEntry]:
    """The tables of `entries` that `qualifiers` (aliases or table names) stand for."""
    wanted = {q.casefold() for q in qualifiers}
    names = {
        table.name.casefold()
        for table in tree.find_all(exp.Table)
        if table.alias_or_name.casefold() in wanted
    }
    return [e for e in entries if e.name.rsplit(".", 1)[-1].casefold() in names]


def _columns_of(entries: list[TableEntry], tables: int = 3, columns: int = 30) -> str:
    """`t has: a, b, c` for each table: a small model picks the right column from a list far
    more often than from a schema it read pages earlier."""
    parts = []
    for entry in entries[:tables]:
        names = list(entry.columns.values())
        more = f" and {len(names) - columns} more" if len(names) > columns else ""
        parts.append(f"{entry.name} has: {', '.join(names[:columns])}{more}")
    return "; ".join(parts)


def _has(entry: TableEntry, name: str) -> bool:
    return name.casefold() in map(str.casefold, entry.columns.values())


def _where_it_is(name: str, owners: list[TableEntry], entries: list[TableEntry]) -> str:
    """`'name' is a column of T (join T on k)`: at most two owning tables, each with the
    columns it shares with the statement's tables, identifiers first."""
    read = {c.casefold() for entry in entries for c in entry.columns.values()}
    parts = []
    for owner in owners[:2]:
        shared = sorted(c for c in owner.columns.values() if c.casefold() in read)
        keys = [c for c in shared if c.casefold().endswith("id")] or shared
        part = f"{owner.name}.{_spelled(owner, name)}"
        if keys:
            part += f" (join {owner.name} on {' or '.join(keys[:2])})"
        parts.append(part)
    return "it is a column of another table: " + "; ".join(parts)


def _spelled(entry: TableEntry, name: str) -> str:
    return next(c for c in entry.columns.values() if c.casefold() == name.casefold())
