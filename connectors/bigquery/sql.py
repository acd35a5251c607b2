"""What a BigQuery statement reads, found with sqlglot's `bigquery` dialect.

The agent's gate has already vetted the SQL; these checks are the connector's own last line
(one query statement that neither writes nor reaches past the tables, only allow-listed datasets)
and the source of its cost advice (a partitioned table scanned without a filter on its partition
column).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from connectors.base import PermissionDenied
from connectors.read_only import Engine, one_read_only_query, shorten

#: Ingestion-time partitioning exposes both pseudo-columns; a filter on either prunes.
_PSEUDO = frozenset({"_partitiontime", "_partitiondate"})

#: Dotted prefixes of BigQuery's plain scalar functions (`SAFE.DIVIDE`, `NET.HOST`); any other
#: qualified call runs a model (`ML.`, `AI.`), a key service (`KEYS.`), an object table
#: (`OBJ.`) or a dataset's own, possibly remote, function. The gate allows these same four.
FUNCTION_PREFIXES = frozenset({"safe", "net", "hll_count", "kll_quantiles"})
_HINT = (
    "Send one read-only SELECT over the allow-listed tables: no table function but UNNEST, "
    "no ML., AI., KEYS. or dataset-qualified (user-defined or remote) functions."
)


@dataclass(frozen=True)
class Layout:
    """How a table is stored: the column it is partitioned on and its clustering columns."""

    partition_column: str | None = None
    clustering: tuple[str, ...] = ()


def parse(sql: str) -> exp.Expr:
    """Exactly one GoogleSQL query; anything else fails closed.

    BigQuery runs `a; b` as a script, so a second statement must never reach it. BigQuery has
    no read-only session: past this check only the service account's IAM roles would stop a
    write, so a statement that is not a query (DDL, DML, a script, anything sqlglot keeps as an
    opaque command), or a query that writes or calls out anywhere in its tree, is refused here,
    before any job exists. Calling out: table functions (`EXTERNAL_QUERY` reaches Cloud SQL,
    `ML.PREDICT` and `AI.*` call models, `KEYS.KEYSET_CHAIN` a key service, a dataset's remote
    function any endpoint), which BigQuery bills and runs under the bot's service account.
    """
    return one_read_only_query(sql, BIGQUERY)


def _outside_call(node: exp.Expr) -> str:
    """The call `node` makes past plain tables and built-in scalar functions, else ''."""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
        return shorten(node.sql("bigquery"))  # a table function: `EXTERNAL_QUERY(...)`
    if (
        isinstance(node, exp.Func)
        and not isinstance(node, exp.Unnest)
        and node.arg_key == "this"  # not a JOIN's ON condition
        and isinstance(node.parent, (exp.From, exp.Join, exp.Lateral))
    ):
        return shorten(node.sql("bigquery"))
    if (
        isinstance(node, exp.Dot)
        and isinstance(node.expression, exp.Func)
        and node.this.sql("bigquery").strip("`").lower() not in FUNCTION_PREFIXES
    ):
        return shorten(node.sql("bigquery"))
    if isinstance(node, exp.Anonymous) and "." in node.name:
        return shorten(node.sql("bigquery"))  # `` `dataset.fn`(x) ``
    return ""


BIGQUERY = Engine(
    name="BigQuery",
    dialect="bigquery",
    language="GoogleSQL (the BigQuery dialect)",
    outside=_outside_call,
    reaches="reaches past the allow-listed tables (a model, a key service, another database or "
    "a user-defined function)",
    hint=_HINT,
)


@dataclass(frozen=True)
class Names:
    """How the connector's jobs resolve table names: `dataset.table` in the job's project,
    a bare `table` in the default dataset."""

    project: str
    default_dataset: tuple[str, str]

    def resolve(self, table: exp.Table) -> tuple[str, str, str]:
        """`(project, dataset, table)` for a table reference."""
        if table.catalog:
            return table.catalog, table.db, table.name
        if table.db:
            return self.project, table.db, table.name
        return (*self.default_dataset, table.name)


def check_datasets(tree: exp.Expr, allowed: frozenset[tuple[str, str]], names: Names) -> None:
    """Refuse a statement that names a table outside the allow-listed datasets.

    Bare names resolve to the default dataset (allowed) or to a CTE, so only qualified
    references are checked: `region-us.INFORMATION_SCHEMA.JOBS` and other projects' tables
    are refused here even if the gate missed them. A `dataset.table` must be allowed in the
    job's project and, if it differs, in the default dataset's project too, so the check
    holds whichever one BigQuery picks.
    """
    for table in tree.find_all(exp.Table):
        if not table.db:
            continue
        projects = {table.catalog} if table.catalog else {names.project, names.default_dataset[0]}
        for project in sorted(projects):
            if (project, table.db) not in allowed:
                listed = ", ".join(f"{p}.{d}" for p, d in sorted(allowed))
                raise PermissionDenied(
                    f"This query reads {project}.{table.db}.{table.name}, outside the datasets "
                    f"this bot may query ({listed}).",
                    hint=f"Use only tables in {listed}, named project.dataset.table.",
                )


def unfiltered_partitions(
    tree: exp.Expr,
    layouts: Mapping[tuple[str, str, str], Layout],
    names: Names,
) -> list[tuple[str, Layout]]:
    """Partitioned tables the statement reads with no filter on their partition column.

    A heuristic, since only BigQuery knows what it prunes: in the table's own SELECT, a
    WHERE or JOIN ... ON condition must name the column (unqualified or through the table's
    alias); in any other SELECT of the statement (an outer query over a CTE, where BigQuery
    pushes the filter down) naming the column is enough.
    """
    found: dict[str, Layout] = {}
    scopes = traverse_scope(tree)
    for scope in scopes:
        for alias, (_, source) in scope.selected_sources.items():
            if not isinstance(source, exp.Table):
                continue
            key = names.resolve(source)
            layout = layouts.get(key)
            if layout is None or layout.partition_column is None:
                continue
            wanted = _names(layout.partition_column)
            here = any(
                c.name.lower() in wanted and c.table in ("", alias) for c in _filter_columns(scope)
            )
            elsewhere = any(
                c.name.lower() in wanted
                for other in scopes
                if other is not scope
                for c in _filter_columns(other)
            )
            if not (here or elsewhere):
                found[".".join(key)] = layout
    return sorted(found.items())


def reads_every_column(tree: exp.Expr) -> bool:
    """Whether the statement selects `*` (BigQuery bills every column it reads);
    `COUNT(*)` reads none."""
    return any(not isinstance(star.parent, exp.Func) for star in tree.find_all(exp.Star))


def _names(column: str) -> frozenset[str]:
    name = column.lower()
    return _PSEUDO if name in _PSEUDO else frozenset({name})


def _filter_columns(scope: Scope) -> list[exp.Column]:
    """Columns named in this SELECT's own WHERE and JOIN ... ON conditions."""
    select = scope.expression
    conditions = [select.args.get("where")]
    conditions += [join.args.get("on") for join in select.args.get("joins") or ()]
    return [c for cond in conditions if cond is not None for c in cond.find_all(exp.Column)]
