"""The tables a deployment exposes, and the checks that need them.

`GateSchema` is built once per connector (the sqlglot `MappingSchema` inside it is reused by every
check). Table references are resolved by suffix, so `orders`, `main.orders` and
`demo.main.orders` all name the DuckDB table `demo.main.orders`; the statement is rewritten to
the fully qualified name, so what a person approves is exactly what runs.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema, normalize_name

from agent.gate import denylist
from agent.gate.casts import parse_allowed_types
from agent.gate.functions import parse_allowed
from agent.gate.parse import ANSI
from agent.gate.source import Span, node_span
from agent.gate.verdict import Reason
from connectors.base import ColumnInfo, TableInfo
from connectors.looker.metadata import is_measure


@dataclass(frozen=True)
class TableEntry:
    """One exposed table: its name as the connector spells it, and lookup keys."""

    name: str
    #: Identifiers to write in SQL, catalog first, quoted where the spelling needs it.
    parts: tuple[exp.Identifier, ...]
    #: Normalised parts, catalog first: the lookup key.
    key: tuple[str, ...]
    #: Normalised column name -> the column's name as the connector spells it.
    columns: Mapping[str, str]


class GateSchema:
    """The tables (and columns) statements may read; no tables means "schema unknown".

    With an unknown schema the gate still enforces every safety rule (and refuses system
    catalogs) but cannot check table and column names.
    """

    def __init__(
        self,
        dialect: str,
        entries: Iterable[TableEntry] = (),
        mapping: dict[str, object] | None = None,
        measures: Iterable[str] = (),
        functions: Iterable[str] = (),
        types: Iterable[str] = (),
    ) -> None:
        self.dialect = dialect
        self.entries: tuple[TableEntry, ...] = tuple(entries)
        #: Functions the deployment trusts besides known pure ones (QUERYBOT_ALLOWED_FUNCTIONS).
        self.functions = parse_allowed(functions)
        #: Types the deployment trusts besides the dialect's built-in ones (QUERYBOT_ALLOWED_TYPES).
        self.types = parse_allowed_types(types)
        #: Lower-cased names of semantic-layer measures (Looker's), which have rules of their own.
        self.measures = frozenset(m.lower() for m in measures)
        self.mapping = MappingSchema(mapping or None, dialect=dialect)
        self._by_suffix: dict[tuple[str, ...], list[TableEntry]] = {}
        self._by_folded_suffix: dict[tuple[str, ...], list[TableEntry]] = {}
        for entry in self.entries:
            for start in range(len(entry.key)):
                suffix = entry.key[start:]
                self._by_suffix.setdefault(suffix, []).append(entry)
                folded = tuple(p.casefold() for p in suffix)
                self._by_folded_suffix.setdefault(folded, []).append(entry)

    @property
    def empty(self) -> bool:
        return not self.entries

    @classmethod
    def from_tables(
        cls,
        tables: Iterable[TableInfo],
        dialect: str,
        allowed: Iterable[str] | None = None,
        functions: Iterable[str] = (),
        types: Iterable[str] = (),
    ) -> GateSchema:
        """Index the connector's tables; keep only those matching `allowed` when it is given.

        An `allowed` entry names a table (`orders`, `main.orders`) or everything under a dataset,
        schema or catalog (`analytics`, `demo.main`): it matches a table when its parts appear,
        adjacent and in order, in the table's qualified name. Names are exact spellings, as the
        connector reads them from the engine's catalog.
        """
        dialect_obj = Dialect.get_or_raise(dialect)
        name = str(dialect)
        allow = [table_key(_split(a, name), name) for a in allowed] if allowed is not None else None
        entries: list[TableEntry] = []
        kept: list[TableInfo] = []
        mapping: dict[str, object] = {}
        parsed_types: dict[str, exp.DataType] = {}
        for table in tables:
            parts = tuple(exact_identifier(p.name, dialect_obj) for p in _split(table.name, name))
            key = table_key(parts, name)
            if allow is not None and not any(_matches(key, a) for a in allow):
                continue
            columns = {_column_key(c.name, dialect_obj): c.name for c in table.columns}
            entries.append(TableEntry(table.name, parts, key, columns))
            kept.append(table)
            if table.columns:
                # nested: catalog -> schema -> table -> column -> type
                node: dict[str, Any] = mapping
                for part in parts:
                    node = node.setdefault(part.sql(name), {})
                for column in table.columns:
                    column_name = exact_identifier(column.name, dialect_obj).sql(name)
                    node[column_name] = _type(column, name, parsed_types)
        _check_depths(entries)
        return cls(
            name, entries, mapping, measures=measure_names(kept), functions=functions, types=types
        )

    @classmethod
    def from_mapping(
        cls,
        mapping: Mapping[str, object],
        dialect: str,
        functions: Iterable[str] = (),
        types: Iterable[str] = (),
    ) -> GateSchema:
        """From JSON-like `{table: {column: type}}`, optionally nested under db and catalog;
        `functions` and `types` as for `from_tables`."""
        tables = _tables_from_mapping(mapping, (), dialect)
        return cls.from_tables(tables, dialect, functions=functions, types=types)

    def resolve(self, key: tuple[str, ...]) -> tuple[list[TableEntry], bool]:
        """Tables a normalised reference may name; True when only a case-blind match found them."""
        exact = self._by_suffix.get(key)
        if exact:
            return exact, False
        return self._by_folded_suffix.get(tuple(p.casefold() for p in key), []), True

    def suggest_table(self, written: str, parts: int) -> str:
        """The closest exposed name with as many parts as the user wrote, for "did you mean"."""
        names = [".".join(p.name for p in e.parts[-parts:]) for e in self.entries]
        close = difflib.get_close_matches(written, names, n=1, cutoff=0.6)
        return close[0] if close else ""


@dataclass
class TableCheck:
    """The outcome of resolving every table reference of a statement."""

    reasons: list[Reason] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    entries: list[TableEntry] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)


def check_tables(tree: exp.Expr, schema: GateSchema) -> TableCheck:
    """Resolve table references (CTE names aside) and rewrite them to fully qualified names."""
    dialect = schema.dialect
    result = TableCheck()
    try:
        references = real_tables(tree, dialect)
    except (SqlglotError, ValueError) as error:  # scopes sqlglot cannot build (odd nesting)
        message = f"Could not resolve the statement's tables: {ANSI.sub('', str(error))[:200]}"
        result.reasons.append(Reason("unsupported", message))
        return result
    for table in references:
        written = ".".join(p.name for p in table.parts)
        key = table_key(tuple(table.parts), dialect)
        span = node_span(table)
        if schema.empty:
            if denylist.is_system_table([p.lower() for p in key], dialect):
                result.reasons.append(_system(written, span))
            elif written not in result.tables:
                result.tables.append(written)
            continue
        found, folded = schema.resolve(key)
        if len(found) == 1:
            entry = found[0]
            _rewrite(table, entry)
            if folded:
                result.fixes.append("re-quoted identifiers")
            if entry.name not in result.tables:
                result.tables.append(entry.name)
                result.entries.append(entry)
        elif found:
            names = ", ".join(sorted(e.name for e in found))
            message = f"Table '{written}' is ambiguous: it may be any of {names}"
            result.reasons.append(Reason("ambiguous_table", message, names, span))
        elif denylist.is_system_table([p.lower() for p in key], dialect):
            result.reasons.append(_system(written, span))
        else:
            suggestion = schema.suggest_table(written, len(key))
            message = f"Unknown table '{written}'; it is not among the tables this bot may read"
            result.reasons.append(Reason("unknown_table", message, suggestion, span))
    return result


def real_tables(tree: exp.Expr, dialect: str) -> list[exp.Table]:
    """Table references in `tree` that name stored tables (not CTEs, not table functions).

    CTE names are matched the way the engine does it, on normalised identifiers and scope by
    scope: `WITH "Secret" AS (...) SELECT * FROM Secret` reads the table `secret` in Postgres.
    Any reference the scope walk does not classify counts as a stored table (fail closed).
    """
    normalised = normalize_identifiers(tree.copy(), dialect=dialect)
    originals = list(tree.find_all(exp.Table))
    copies = list(normalised.find_all(exp.Table))
    cte_refs: set[int] = set()
    for scope in traverse_scope(normalised):
        for table in scope.tables:
            if _is_cte_ref(table, scope):
                cte_refs.add(id(table))
    return [
        original
        for original, copy in zip(originals, copies, strict=True)
        if isinstance(original.this, exp.Identifier) and id(copy) not in cte_refs
    ]


def _is_cte_ref(table: exp.Table, scope: Scope) -> bool:
    return (
        isinstance(table.this, exp.Identifier)
        and not table.args.get("db")
        and not table.args.get("catalog")
        and table.name in scope.cte_sources
    )


def _rewrite(table: exp.Table, entry: TableEntry) -> None:
    """Point a reference at the exposed table's full name, keeping its alias and clauses."""
    parts = [p.copy() for p in entry.parts]
    padded: list[exp.Identifier | None] = [None] * (3 - len(parts))
    padded.extend(parts)
    for arg, part in zip(("catalog", "db", "this"), padded, strict=True):
        table.set(arg, part)
    table.meta.pop("quoted_table", None)  # BigQuery `a.b.c` as one quoted name: now its parts


def _system(written: str, span: Span | None) -> Reason:
    message = f"'{written}' is a system catalog; only the deployment's tables may be read"
    return Reason("system_catalog", message, span=span)


def _split(name: str, dialect: str) -> tuple[exp.Identifier, ...]:
    """A qualified name's identifiers, catalog first, honouring the dialect's quoting."""
    try:
        parts = exp.to_table(name, dialect=dialect).parts
        identifiers = tuple(p for p in parts if isinstance(p, exp.Identifier))
        if parts and len(identifiers) == len(parts):
            return identifiers
    except SqlglotError:
        pass
    return tuple(exp.to_identifier(p, quoted=True) for p in name.split("."))


def exact_identifier(name: str, dialect: Dialect) -> exp.Identifier:
    """An identifier that keeps `name`'s exact spelling when written in `dialect`."""
    ident = exp.to_identifier(name)
    strategy = dialect.normalization_strategy
    folding = strategy in (NormalizationStrategy.LOWERCASE, NormalizationStrategy.UPPERCASE)
    if folding and dialect.case_sensitive(name):
        ident.set("quoted", True)
    return ident


def table_key(parts: Iterable[exp.Expr], dialect: str) -> tuple[str, ...]:
    """A table's lookup key. sqlglot types `Table.parts` as any expressions: one that is not an
    identifier has no case to fold, so its name is its key (as `normalize_name` leaves it)."""
    return tuple(
        normalize_name(p, dialect=dialect, is_table=True).name
        if isinstance(p, exp.Identifier)
        else p.name
        for p in parts
    )


def _column_key(name: str, dialect: Dialect) -> str:
    """A schema column's lookup key: its exact spelling, normalised as the engine reads it."""
    return normalize_name(exact_identifier(name, dialect), dialect=dialect).name


def _matches(key: tuple[str, ...], allowed: tuple[str, ...]) -> bool:
    n = len(allowed)
    return any(key[i : i + n] == allowed for i in range(len(key) - n + 1))


def measure_names(tables: Iterable[TableInfo]) -> frozenset[str]:
    """Lower-cased names of Looker measures among the tables' columns (the Looker rules want each
    wrapped in AGGREGATE())."""
    return frozenset(c.name.lower() for t in tables for c in t.columns if is_measure(c))


def _type(column: ColumnInfo, dialect: str, cache: dict[str, exp.DataType]) -> exp.DataType:
    """The column's type for sqlglot; engine types sqlglot cannot read become UNKNOWN."""
    if column.type not in cache:
        try:
            cache[column.type] = exp.DataType.build(column.type, dialect=dialect, udt=True)
        except (SqlglotError, ValueError, TypeError):
            cache[column.type] = exp.DataType.build("unknown")
    return cache[column.type]


def _check_depths(entries: list[TableEntry]) -> None:
    depths = {len(e.key) for e in entries}
    if len(depths) > 1 or any(d > 3 for d in depths):
        names = ", ".join(sorted({e.name for e in entries})[:5])
        raise ValueError(f"Table names must all have the same 1-3 parts; got {names}")


def _tables_from_mapping(
    mapping: Mapping[str, object], prefix: tuple[str, ...], dialect: str
) -> list[TableInfo]:
    tables: list[TableInfo] = []
    for name, value in mapping.items():
        if not isinstance(value, Mapping):
            raise ValueError(f"Expected a mapping of columns under {'.'.join((*prefix, name))}")
        if value and all(isinstance(v, Mapping) for v in value.values()):
            tables.extend(_tables_from_mapping(value, (*prefix, name), dialect))
            continue
        *qualifiers, last = [exp.to_identifier(p) for p in (*prefix, name)][-3:]
        db = qualifiers[-1] if qualifiers else None
        catalog = qualifiers[-2] if len(qualifiers) > 1 else None
        table = exp.table_(last, db, catalog, quoted=None)
        columns = tuple(ColumnInfo(str(c), str(t)) for c, t in value.items())
        tables.append(TableInfo(table.sql(dialect), columns))
    return tables
