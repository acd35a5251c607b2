"""Looker's Open SQL Interface: the sqlglot dialect its SQL is read and written in, and the
rules the gate enforces for it on top of the usual safety walk.

Looker documents (https://cloud.google.com/looker/docs/sql-interface) that the interface reads
GoogleSQL, needs backticks around every model, Explore and field name (a field is one identifier
spelled `view.field`), wants each LookML measure wrapped in the special `AGGREGATE()` function,
and supports SELECT only: no JOIN (an Explore already joins its views), no subqueries, no window
functions. A statement sent through JDBC must not end with a semicolon.

The dialect: sqlglot's BigQuery, since Looker reads GoogleSQL (functions, operators, literals,
`||` as concatenation), with two changes. BigQuery reads `` `orders.count` `` as the column
`count` of the table `orders`, which is not what Looker means, so this parser keeps a quoted
dotted column name as one identifier (as sqlglot's MySQL dialect would; MySQL itself was not
chosen, since it reads `||` as OR and writes MySQL-only functions). And the generator quotes
every identifier, so what runs always carries the backticks Looker requires, whatever the
checks rewrote. `AGGREGATE(...)` is an unknown function to sqlglot and stays as written.

Following from the measure rule, `SELECT *` is refused over an Explore that has measures (it
would read them outside AGGREGATE()), and AGGREGATE() may not filter rows in WHERE (HAVING
filters on measures, as in SQL). Two rules are added to Looker's: a query reads one Explore
(a SELECT without FROM reaches no LookML model), and BigQuery's denied functions are denied
too, as Looker runs on BigQuery.
The trailing-semicolon rule is met by the gate's usual fix: semicolons at the end are stripped
before parsing (and listed among the fixes), so no statement sent to Looker ends with one.
`JSON_OBJECT` filter arguments after an Explore (`FROM m.e(JSON_OBJECT(...))`) are not supported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.bigquery import BigQuery
from sqlglot.generators.bigquery import BigQueryGenerator
from sqlglot.parser import Parser as BaseParser
from sqlglot.parsers.bigquery import BigQueryParser

from agent.gate import denylist
from agent.gate.rules import function_names
from agent.gate.verdict import Reason

if TYPE_CHECKING:
    from agent.gate.schema import GateSchema

DIALECT = "looker"

#: Reason codes of the Looker rules, each naming the rule broken.
RULES = {
    "looker_only_select": "one plain SELECT only (no UNION, no WITH)",
    "looker_one_explore": "the query reads one Explore: FROM `model`.`explore`",
    "looker_backticks": "every model, Explore and field name goes in backticks",
    "looker_measure_outside_aggregate": "a LookML measure may appear only inside AGGREGATE()",
    "looker_aggregate_argument": "AGGREGATE() takes exactly one LookML measure",
    "looker_aggregate_in_group_by": "GROUP BY may not contain AGGREGATE()",
    "looker_aggregate_in_where": "WHERE may not contain AGGREGATE() (filter on measures in HAVING)",
    "looker_star_with_measures": "SELECT * may not read an Explore that has measures",
    "looker_join": "no JOIN (an Explore already joins its views: use the Explore with the fields)",
    "looker_subquery": "no subqueries",
    "looker_window": "no window functions",
}


class Looker(BigQuery):
    """GoogleSQL as Looker's Open SQL Interface reads it (registered in sqlglot as "looker")."""

    class Parser(BigQueryParser):
        def _parse_column(self) -> exp.Expr | None:
            # sqlglot's own column parsing, without BigQuery's splitting of `a.b` into parts
            return BaseParser._parse_column(self)

    class Generator(BigQueryGenerator):
        # BigQuery's generator rewrites `GROUP BY <expr>` to that expression's alias when the
        # query also orders (a workaround for a BigQuery bug); Looker gets the grouping as
        # written. Its other SELECT rewrites concern UNNEST, DISTINCT ON and semi-joins, which
        # Looker's rules refuse anyway.
        TRANSFORMS: ClassVar = {
            k: v for k, v in BigQueryGenerator.TRANSFORMS.items() if k is not exp.Select
        }

    def generator(self, **opts: Any) -> Any:
        return super().generator(**{**opts, "identify": True})


def looker_reasons(query: exp.Expr, schema: GateSchema) -> list[Reason]:
    """Every Looker rule `query` breaks, de-duplicated, in walk order; empty when it keeps them."""
    reasons: list[Reason] = []
    if not isinstance(query, exp.Select) or query.args.get("with_"):
        reasons.append(_reason("looker_only_select"))
    elif not _reads_one_explore(query):
        reasons.append(_reason("looker_one_explore"))
    fields = {name.lower() for entry in schema.entries for name in entry.columns.values()}
    aliases = {a.alias.lower() for a in query.find_all(exp.Alias) if a.alias}
    for node in query.walk():
        if isinstance(node, exp.Join):
            reasons.append(_reason("looker_join"))
        elif isinstance(node, (exp.Subquery, exp.Select)) and node is not query:
            reasons.append(_reason("looker_subquery"))
        elif isinstance(node, (exp.Window, exp.Qualify)):
            reasons.append(_reason("looker_window"))
        elif isinstance(node, exp.Table):
            reasons.extend(_table_quoting(node))
        elif isinstance(node, exp.Column):
            reasons.extend(_column_quoting(node, fields, aliases))
            reasons.extend(_measure_use(node, schema.measures))
        elif _is_aggregate(node):
            reasons.extend(_aggregate_argument(node, schema.measures))
        elif isinstance(node, exp.Func):
            reasons.extend(_bigquery_denied(node))
    reasons.extend(_star(query, schema))
    reasons.extend(_where(query))
    reasons.extend(_group_by(query))
    return list(dict.fromkeys(reasons))


def _reason(code: str, detail: str = "") -> Reason:
    message = f"Looker SQL rule broken: {RULES[code]}"
    return Reason(code, f"{message} ({detail})" if detail else message)


def _is_aggregate(node: exp.Expr) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.upper() == "AGGREGATE"


def _reads_one_explore(query: exp.Select) -> bool:
    source = query.args.get("from_")
    table = source.this if source is not None else None
    return isinstance(table, exp.Table) and isinstance(table.this, exp.Identifier)


def _bigquery_denied(call: exp.Func) -> list[Reason]:
    """Looker runs its queries on BigQuery: BigQuery's denied functions are denied here too."""
    names = function_names(call)
    for name in names:
        if why := denylist.denied_function(name, "bigquery"):
            return [Reason("denied_function", f"{names[0]}() {why}")]
    return []


def _table_quoting(table: exp.Table) -> list[Reason]:
    unquoted = [p.name for p in table.parts if isinstance(p, exp.Identifier) and not p.quoted]
    if not unquoted:
        return []
    written = ".".join(f"`{p.name}`" for p in table.parts)
    return [_reason("looker_backticks", f"write the Explore as {written}")]


def _column_quoting(column: exp.Column, fields: set[str], aliases: set[str]) -> list[Reason]:
    parts = [p for p in column.parts if isinstance(p, exp.Identifier)]
    if all(p.quoted for p in parts):
        return []
    dotted = ".".join(p.name for p in parts)
    if dotted.lower() in fields:
        return [_reason("looker_backticks", f"write {dotted} as one name: `{dotted}`")]
    if len(parts) == 1 and parts[0].name.lower() in aliases:
        return []  # a reference to the query's own alias, not a Looker name
    return [_reason("looker_backticks", f"write {dotted} as `{dotted}`")]


def _measure_use(column: exp.Column, measures: frozenset[str]) -> list[Reason]:
    if column.name.lower() not in measures:
        return []
    if _is_aggregate(column.parent) if column.parent else False:
        return []
    detail = f"write AGGREGATE(`{column.name}`)"
    return [_reason("looker_measure_outside_aggregate", detail)]


def _aggregate_argument(call: exp.Expr, measures: frozenset[str]) -> list[Reason]:
    args = call.expressions
    if len(args) == 1 and isinstance(args[0], exp.Column) and args[0].name.lower() in measures:
        return []
    written = ", ".join(a.sql(DIALECT) for a in args)
    return [_reason("looker_aggregate_argument", f"not AGGREGATE({written})")]


def _star(query: exp.Expr, schema: GateSchema) -> list[Reason]:
    """`*` (or `explore.*`) selects every field, measures included, and a measure may appear
    only inside AGGREGATE(); Explores without measures may be read with `*`."""
    if not isinstance(query, exp.Select) or not any(
        isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
        for p in query.expressions
    ):
        return []
    source = query.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table):
        return []  # no single Explore: looker_one_explore says so
    entries, _ = schema.resolve(tuple(p.name for p in table.parts))
    measures = sorted(
        name
        for entry in entries
        for name in entry.columns.values()
        if name.lower() in schema.measures
    )
    if not measures:
        return []
    listed = ", ".join(f"`{m}`" for m in measures[:3]) + (", ..." if len(measures) > 3 else "")
    detail = f"{table.name} has the measures {listed}: list the fields instead"
    return [_reason("looker_star_with_measures", detail)]


def _where(query: exp.Expr) -> list[Reason]:
    where = query.args.get("where") if isinstance(query, exp.Select) else None
    if where is not None and any(_is_aggregate(n) for n in where.walk()):
        return [_reason("looker_aggregate_in_where", "move the condition to HAVING")]
    return []


def _group_by(query: exp.Expr) -> list[Reason]:
    """AGGREGATE() in GROUP BY, written there or referred to by position or alias."""
    group = query.args.get("group") if isinstance(query, exp.Select) else None
    if group is None:
        return []
    projections = query.expressions
    by_alias = {p.alias.lower(): p for p in projections if isinstance(p, exp.Alias) and p.alias}
    for item in group.expressions:
        target: exp.Expr | None = item
        if isinstance(item, exp.Literal) and item.is_int:
            position = int(item.name)
            target = projections[position - 1] if 0 < position <= len(projections) else None
        elif isinstance(item, exp.Column) and not item.table:
            target = by_alias.get(item.name.lower(), item)
        if target is not None and any(_is_aggregate(n) for n in target.walk()):
            return [_reason("looker_aggregate_in_group_by", "group by dimensions only")]
    return []
