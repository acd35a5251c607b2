"""Per-identity table allowlists, enforced by querybot, for engines with no identities to act as
(DuckDB, SQLite, the demo).

`TableAllowlist` wraps such a connector: each identity the deployment's `run_as` rules name gets
a list of the tables it may read, and a run naming an identity (`RunContext.identity`) is
refused, before anything reaches the engine, when its statement reads any other table. What it
reads is decided on the statement sqlglot parses, in the connector's dialect: every table
reference anywhere in it (joins, subqueries, set operations, CTE bodies), a name a CTE in scope
defines not counting as a table. Anything that cannot be tied to a listed table refuses the run:
SQL that does not parse, more than one statement, anything but a query, a table the catalog does
not know (system catalogs included), an ambiguous name, and table functions other than
`range`/`generate_series`. Functions that read a table named in a string (DuckDB's
`query_table`) are refused by the gate's function list before a statement gets here.

The engine itself still runs the statement as the connector's one login: the allowlist decides
which tables, not which rows; an allowed view gives whatever the view reads.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace

import sqlglot
from sqlglot import exp

from connectors.base import (
    Connector,
    ConnectorError,
    CostEstimate,
    PermissionDenied,
    QueryFailed,
    QueryResult,
    RunContext,
    TableInfo,
    find_table,
)

#: Table functions that only generate rows from their arguments.
_GENERATED = (exp.GenerateSeries,)

#: The schema DuckDB and SQLite look in first for a name without one.
_DEFAULT_SCHEMA = "main"

#: Names shown in a refusal; the rest are counted.
_SHOWN = 5


class TableAllowlist:
    """`inner`, with each identity held to its allowlist (identity -> table names as people
    write them: `orders`, `main.orders`, each naming one table of the catalog). Everything but
    `run` and `unreadable` is the inner connector's."""

    acts_as_identities = True

    def __init__(self, inner: Connector, allowlists: Mapping[str, Sequence[str]]) -> None:
        self.inner = inner
        self.allowlists = {identity: tuple(names) for identity, names in allowlists.items()}
        self.name: str = inner.name
        self.dialect: str = inner.dialect

    def list_tables(self) -> list[TableInfo]:
        return self.inner.list_tables()

    def describe(self, table: str) -> TableInfo:
        return self.inner.describe(table)

    def estimate(self, sql: str) -> CostEstimate | None:
        return self.inner.estimate(sql)

    def cancel(self, job_key: str) -> bool:
        return self.inner.cancel(job_key)

    def close(self) -> None:
        self.inner.close()

    def problems(self) -> dict[str, str]:
        """Allowlist entries that name no single table of the catalog, by `identity.entry`:
        why (unknown, with a "did you mean", or ambiguous). Such an entry allows nothing."""
        tables = self.inner.list_tables()
        found: dict[str, str] = {}
        for identity, names in self.allowlists.items():
            for name in names:
                try:
                    resolve(tables, name)
                except ConnectorError as exc:
                    found[f"{identity}.{name}"] = f"{exc.message} {exc.hint}".strip()
        return found

    def allowed(self, identity: str) -> set[str]:
        """The catalog names of the tables `identity` may read. PermissionDenied when it has no
        allowlist."""
        if identity not in self.allowlists:
            raise PermissionDenied(
                f"querybot cannot run queries as {identity!r} on {self.name}: no table allowlist "
                "names it.",
                hint=f'Add {identity} = ["table", ...] under run_as.tables in querybot\'s config '
                "file, or change the run_as rules.",
            )
        tables = self.inner.list_tables()
        names: set[str] = set()
        for name in self.allowlists[identity]:
            try:
                names.add(resolve(tables, name).name)
            except ConnectorError:
                continue  # `problems` reports it; it allows nothing
        return names

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        """Those of `tables` (catalog names) outside `identity`'s allowlist."""
        allowed = self.allowed(identity)
        return [name for name in tables if name not in allowed]

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run `sql` as the inner connector's login; with `context.identity`, only when every
        table it reads is on that identity's allowlist (PermissionDenied otherwise, and nothing
        reaches the engine)."""
        identity = context.identity if context else ""
        if identity:
            allowed = self.allowed(identity)
            tables = self.inner.list_tables()
            outside = sorted(
                {name for name in tables_read(sql, self.dialect, tables) if name not in allowed}
            )
            if outside:
                names = ", ".join(outside[:_SHOWN])
                more = f" and {len(outside) - _SHOWN} more" if len(outside) > _SHOWN else ""
                raise PermissionDenied(
                    f"This query reads {names}{more}, which {identity!r} may not read (its table "
                    "allowlist in querybot's config file), so it did not run.",
                    hint="Ask about the tables your access lists, or ask whoever runs querybot "
                    "to add the table to run_as.tables.",
                )
            context = replace(context, identity="") if context else None
        return self.inner.run(sql, max_rows=max_rows, timeout_s=timeout_s, context=context)


def resolve(tables: Sequence[TableInfo], name: str) -> TableInfo:
    """The table of `tables` `name` means, as the engine resolves it: the full name or a trailing
    part of it, and a bare name in several schemas is the one in `main`. QueryFailed when it
    names none, or several."""
    hint = "Qualify it with its schema."
    try:
        return find_table(tables, name, qualify_hint=hint)
    except QueryFailed as exc:
        in_main = [t for t in tables if t.name.lower().split(".")[-2:-1] == [_DEFAULT_SCHEMA]]
        if "." in name or "ambiguous" not in exc.message:
            raise
        try:
            return find_table(in_main, name, qualify_hint=hint)
        except QueryFailed:
            raise exc from None


def tables_read(sql: str, dialect: str, tables: Sequence[TableInfo]) -> list[str]:
    """The catalog names of every table `sql` reads. A reference that names no single table of
    `tables` (a system catalog, a file, an ambiguous name) comes back as written, so no
    allowlist holds it; PermissionDenied when the statement cannot be read as one query."""
    cannot = "querybot could not check which tables this query reads, so it did not run"
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise PermissionDenied(f"{cannot}: it does not parse.", engine_message=str(exc)) from exc
    statements = [tree for tree in trees if tree is not None]
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise PermissionDenied(f"{cannot}: it is not one query.")
    found: list[str] = []
    for table in statements[0].find_all(exp.Table):
        if isinstance(table.this, _GENERATED) or _names_a_cte(table):
            continue
        if not isinstance(table.this, exp.Identifier):
            raise PermissionDenied(f"{cannot}: it reads from {table.this.sql(dialect)}.")
        written = ".".join(part.name for part in table.parts)
        if any("." in part.name for part in table.parts):  # a file name (`FROM 'x.csv'`)
            found.append(written)
            continue
        try:
            found.append(resolve(tables, written).name)
        except ConnectorError:
            found.append(written)
    return found


def _names_a_cte(table: exp.Table) -> bool:
    """Whether `table` is a reference to a CTE in scope rather than to a table: unqualified,
    named by a WITH of an enclosing query, where a CTE's own body sees only the CTEs before it
    (and itself, in a WITH RECURSIVE)."""
    if len(table.parts) != 1:
        return False
    name = table.name.lower()
    chain: list[exp.Expr] = [table]  # the table, then each enclosing node outwards
    while (parent := chain[-1].parent) is not None:
        chain.append(parent)
    skip = 0
    for child, node in itertools.pairwise(chain):
        if skip:  # the query that owns a WITH whose CTE body holds the table: checked already
            skip -= 1
            continue
        if isinstance(node, exp.With):
            ctes = list(node.expressions)
            at = next((i for i, cte in enumerate(ctes) if cte is child), None)
            if at is None:  # not in a CTE's body: nothing this WITH defines is in scope
                visible = []
            else:
                visible = ctes[: at + 1] if node.args.get("recursive") else ctes[:at]
            if name in {cte.alias_or_name.lower() for cte in visible}:
                return True
            skip = 1
            continue
        with_ = next((v for v in node.args.values() if isinstance(v, exp.With)), None)
        if with_ is not None and name in {c.alias_or_name.lower() for c in with_.expressions}:
            return True
    return False
