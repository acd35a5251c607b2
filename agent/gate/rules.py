"""Safety walks over one parsed statement: pure functions from a tree to a list of reasons.

The root must be a query, and every node of the tree must be a kind known to be read-only:
writes hide below a SELECT root (`WITH d AS (DELETE ... RETURNING *) SELECT ...`,
`SELECT ... INTO`, `SELECT ... FOR UPDATE`, `query('DROP TABLE t')`), so the walk covers the whole
tree and anything it does not recognise is refused (`unsupported`) rather than let through.

Reason codes: `not_a_query`, `write`, `ddl`, `command`, `copy`, `attach`, `pragma`, `set`,
`transaction`, `scripting`, `into`, `locking`, `hint`, `unsupported`, `denied_function`,
`denied_table_function`, `qualified_function`, `file_table`, `variable`, `unknown_function`,
`denied_type`.

Functions are allow-listed (functions.py): a call sqlglot models is accepted unless it reveals the
server or session; a call it does not model only when its name is a known pure function of the
dialect or the deployment lists it. Denied names (denylist.py) stay denied, with their reason.
Types are allow-listed too (casts.py): a type name reaches the catalogue beyond the exposed tables.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from agent.gate import casts, denylist, functions
from agent.gate.source import node_span, shorten, written
from agent.gate.verdict import Reason

QUERY_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)

#: Calls whose name is whatever was written (sqlglot does not model them).
ANONYMOUS = (exp.Anonymous, exp.AnonymousAggFunc, exp.ParameterizedAgg)

#: Node kinds allowed anywhere in a query (functions are checked by `function_reason` instead).
ALLOWED: frozenset[type[exp.Expr]] = frozenset(
    {
        # query structure
        exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery, exp.With, exp.CTE,
        exp.RecursiveWithSearch, exp.From, exp.Join, exp.Where, exp.Group, exp.Having,
        exp.Qualify, exp.Order, exp.Ordered, exp.Limit, exp.Offset, exp.Fetch, exp.LimitOptions,
        exp.Distinct, exp.Window, exp.WindowSpec, exp.Table, exp.TableAlias, exp.Alias,
        exp.Aliases, exp.Lateral, exp.Values, exp.Tuple, exp.Pivot, exp.PivotAlias, exp.PivotAny,
        exp.UnpivotColumns, exp.TableSample, exp.Cube, exp.Rollup, exp.GroupingSets,
        exp.MatchRecognize, exp.MatchRecognizeMeasure, exp.Connect, exp.Prior, exp.Final,
        exp.Version, exp.HistoricalData, exp.Partition, exp.PartitionByExcluding, exp.PreWhere,
        exp.WithTableHint, exp.IndexTableHint, exp.Sort, exp.Cluster, exp.Distribute,
        exp.ColumnDef, exp.Comprehension, exp.Lambda, exp.WithFill, exp.TableColumn,
        exp.OverflowTruncateBehavior,
        # names and values
        exp.Column, exp.Identifier, exp.Star, exp.Literal, exp.Null, exp.Boolean, exp.Var,
        exp.Placeholder, exp.Pseudocolumn, exp.Dot,
        exp.Bracket, exp.Slice, exp.HexString, exp.BitString, exp.ByteString, exp.RawString,
        exp.UnicodeString, exp.National, exp.Introducer, exp.CharacterSet, exp.DataType,
        exp.DataTypeParam, exp.PseudoType, exp.ObjectIdentifier, exp.Interval, exp.IntervalSpan,
        exp.Kwarg, exp.PropertyEQ, exp.PositionalColumn, exp.ScopeResolution,
        # operators
        exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.DPipe, exp.EQ, exp.NEQ,
        exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Is, exp.Like, exp.ILike, exp.Glob, exp.SimilarTo,
        exp.NullSafeEQ, exp.NullSafeNEQ, exp.Escape, exp.Between, exp.In, exp.Any, exp.All,
        exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot, exp.BitwiseLeftShift,
        exp.BitwiseRightShift, exp.Neg, exp.Not, exp.Paren, exp.Distance, exp.DistanceNd,
        exp.Overlaps, exp.Adjacent, exp.ExtendsLeft, exp.ExtendsRight, exp.Match, exp.Operator,
        exp.AtTimeZone, exp.FromTimeZone, exp.AtIndex, exp.NestedJSONSelect,
        # function decorations
        exp.Filter, exp.WithinGroup, exp.IgnoreNulls, exp.RespectNulls, exp.HavingMax,
        exp.FormatPhrase, exp.FormatJson, exp.JSONPath, exp.JSONPathKey, exp.JSONPathRoot,
        exp.JSONPathSubscript, exp.JSONPathSlice, exp.JSONPathWildcard, exp.JSONPathSelector,
        exp.JSONPathUnion, exp.JSONPathFilter, exp.JSONPathRecursive, exp.JSONPathScript,
        exp.JSONKeyValue, exp.JSONSchema, exp.JSONColumnDef, exp.JSONValue, exp.JSONExtractQuote,
        exp.OnCondition, exp.XMLNamespace, exp.XMLKeyValueOption,
    }
)  # fmt: skip

#: Codes for node kinds that are known to be unsafe; anything else not allowed is `unsupported`.
_BY_CLASS: dict[type[exp.Expr], str] = {
    exp.Command: "command",
    exp.Copy: "copy",
    exp.LoadData: "copy",
    exp.Export: "copy",
    exp.Put: "copy",
    exp.Get: "copy",
    exp.ListStage: "copy",
    exp.Attach: "attach",
    exp.Detach: "attach",
    exp.Install: "attach",
    exp.Use: "attach",
    exp.Pragma: "pragma",
    exp.Set: "set",
    exp.SetItem: "set",
    exp.AlterSession: "set",
    exp.Transaction: "transaction",
    exp.Commit: "transaction",
    exp.Rollback: "transaction",
    exp.Declare: "scripting",
    exp.DeclareItem: "scripting",
    exp.Execute: "scripting",
    exp.ExecuteSql: "scripting",
    exp.Block: "scripting",
    exp.IfBlock: "scripting",
    exp.WhileBlock: "scripting",
    exp.LoopBlock: "scripting",
    exp.RepeatBlock: "scripting",
    exp.CaseStatement: "scripting",
    exp.StoredProcedure: "scripting",
    exp.Return: "scripting",
    exp.EndStatement: "scripting",
    exp.Into: "into",
    exp.Parameter: "variable",
    exp.SessionParameter: "variable",
    exp.Lock: "locking",
    exp.LockingStatement: "locking",
    exp.Hint: "hint",
    exp.JoinHint: "hint",
    exp.Describe: "not_a_query",
    exp.Show: "not_a_query",
    exp.Summarize: "not_a_query",
    exp.Grant: "ddl",
    exp.Revoke: "ddl",
    exp.Analyze: "ddl",
    exp.Cache: "ddl",
    exp.Uncache: "ddl",
    exp.Refresh: "ddl",
    exp.MultitableInserts: "write",
    exp.ConditionalInsert: "write",
}
_BY_MODULE = {
    "sqlglot.expressions.dml": "write",
    "sqlglot.expressions.ddl": "ddl",
    "sqlglot.expressions.properties": "ddl",
    "sqlglot.expressions.constraints": "ddl",
}

_MESSAGES = {
    "not_a_query": "{kind} is not a query; send one SELECT (or WITH ... SELECT)",
    "write": "{kind} writes data; only read-only queries are allowed",
    "ddl": "{kind} changes the database; only read-only queries are allowed",
    "command": "'{kind}' is not a query the gate can read (it would run as an opaque command)",
    "copy": "{kind} moves data to or from files",
    "attach": "{kind} attaches databases, extensions or schemas",
    "pragma": "PRAGMA changes or reveals engine settings",
    "set": "{kind} changes session state",
    "transaction": "transaction control ({kind}) is not allowed",
    "scripting": "scripting ({kind}) is not allowed",
    "into": "SELECT ... INTO writes a table, file or variable",
    "variable": "{kind} reads a server, session or user variable",
    "locking": "locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE) take locks",
    "hint": "optimizer hints are not allowed (some change settings)",
    "unsupported": "{kind} is not allowed in a read-only query",
}


def safety_reasons(
    tree: exp.Expr,
    dialect: str,
    allowed: frozenset[str] = frozenset(),
    source: str = "",
    types: frozenset[str] = frozenset(),
) -> list[Reason]:
    """Every safety problem in `tree`, de-duplicated, in walk order; empty when it is safe.

    `allowed`: lower-case names (`f` or `schema.f`) of functions the deployment trusts besides
    the dialect's known pure ones (functions.parse_allowed reads QUERYBOT_ALLOWED_FUNCTIONS).
    `types`: lower-case names of types it trusts besides the dialect's built-in ones
    (casts.parse_allowed_types reads QUERYBOT_ALLOWED_TYPES).
    `source`: the text `tree` was parsed from; reasons then quote it (not sqlglot's rewriting)
    and carry the span of the node refused.
    """
    reasons: list[Reason] = []
    if query_root(tree) is None:
        code = _code(tree)
        code = code if code not in (None, "unsupported") else "not_a_query"
        whole = (0, len(source)) if source else None
        reasons.append(replace(_reason(code, tree, source, whole=True), span=whole))
    refused: set[int] = set()  # statements already refused: their clauses add nothing
    for node in tree.walk(prune=lambda n: id(n) in refused):
        reason = node_reason(node, dialect, allowed, source, types)
        if reason is not None:
            reasons.append(replace(reason, span=reason.span or node_span(node, source)))
            if _code(node):
                refused.add(id(node))
    return list(dict.fromkeys(reasons))


def query_root(tree: exp.Expr) -> exp.Query | None:
    """The query under any bare parentheses, or None when the statement is not a query."""
    while isinstance(tree, exp.Subquery) and not any(
        value for key, value in tree.args.items() if key != "this"
    ):
        tree = tree.this
    return tree if isinstance(tree, QUERY_ROOTS) else None


def node_reason(
    node: exp.Expr,
    dialect: str,
    allowed: frozenset[str] = frozenset(),
    source: str = "",
    types: frozenset[str] = frozenset(),
) -> Reason | None:
    """The problem with one node on its own (its children are walked separately); `source`
    and `types` as for `safety_reasons`."""
    if isinstance(node, exp.Func):
        return function_reason(node, dialect, allowed, source)
    if isinstance(node, exp.Table):
        return _table_reason(node, dialect)
    if isinstance(node, exp.SetOperation):
        for side in (node.this, node.expression):
            if not isinstance(side, exp.Query):
                return _reason("not_a_query", side, source)
    if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Func):
        return table_function_reason(node.this, dialect)
    if isinstance(node, exp.PropertyEQ) and isinstance(
        node.this, (exp.Parameter, exp.SessionParameter, exp.Placeholder)
    ):
        return Reason("set", f"assigning a variable ({node.sql(dialect)}) changes session state")
    if isinstance(node, (exp.Parameter, exp.SessionParameter)):
        variable = shorten(node.sql(dialect))
        return Reason("variable", f"'{variable}' reads a server, session or user variable")
    if isinstance(node, exp.Column) and _is_session_word(node, dialect):
        word = node.name
        message = f"{word} is a session function here ({functions.SYSTEM})"
        return Reason("denied_function", f'{message}; quote it if you mean a column: "{word}"')
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        return _dotted_function_reason(node, dialect, allowed)
    if isinstance(node, exp.DataType):
        return casts.type_reason(node, dialect, types)
    if isinstance(node, exp.TableFromRows) and dialect == "snowflake":
        return _table_of_rows_reason(node, dialect)
    code = _code(node)
    return _reason(code, node, source) if code else None


def function_reason(
    node: exp.Func, dialect: str, allowed: frozenset[str] = frozenset(), source: str = ""
) -> Reason | None:
    """Why a function call is refused: a denied class or name, or a name not known to be pure
    (a call sqlglot models is quoted as written in `source`, when given)."""
    names = function_names(node)
    why = denylist.DENIED_CLASSES.get(type(node))
    if why is None and functions.system_class(node, dialect):
        why = functions.SYSTEM
    for name in names:
        why = why or denylist.denied_function(name, dialect)
    if why is not None:
        call = (
            f"{names[0]}()" if isinstance(node, ANONYMOUS) else written(node, source, dialect, 40)
        )
        return Reason("denied_function", f"{call} {why}")
    if node.arg_key == "this" and isinstance(node.parent, (exp.From, exp.Join)):
        return table_function_reason(node, dialect)
    if not isinstance(node, ANONYMOUS):
        return None  # a computation sqlglot models, and not a system one
    if node.arg_key == "this" and isinstance(node.parent, exp.Table):
        return None  # a table function: `_table_reason` checks it against its own list
    name = names[0]
    prefix = _prefix(node.parent) if isinstance(node.parent, exp.Dot) else None
    if prefix is not None and node.arg_key == "expression":  # not a method on a value
        name = f"{prefix}.{name}"
        if not _is_family(prefix, dialect) and name not in allowed:
            return None  # `_dotted_function_reason` refuses the qualified call
    elif isinstance(node.parent, exp.NetFunc):
        name = f"net.{name}"
    if name in allowed or functions.is_pure(name, dialect):
        return None
    if name in denylist.TABLE_FUNCTIONS.get(dialect, frozenset()):
        return None  # a set-returning function in the select list or LATERAL
    return Reason("unknown_function", functions.unknown_message(name, dialect))


def table_function_reason(node: exp.Func, dialect: str) -> Reason | None:
    """Table functions in FROM are allowed only from a short list of row generators."""
    names = function_names(node)
    if isinstance(node, denylist.TABLE_FUNCTION_CLASSES) or any(
        denylist.denied_function(name, dialect) for name in names
    ):
        return None  # a denied name is reported by `function_reason`, with its reason
    if isinstance(node, exp.Anonymous) and names[0] in denylist.TABLE_FUNCTIONS.get(
        dialect, frozenset()
    ):
        return None
    allowed = ", ".join(sorted(denylist.TABLE_FUNCTIONS.get(dialect, frozenset())))
    message = f"{names[0]}() is not allowed in FROM (allowed table functions: {allowed})"
    return Reason("denied_table_function", message)


def _table_of_rows_reason(node: exp.TableFromRows, dialect: str) -> Reason | None:
    """Snowflake's `TABLE(...)` around FLATTEN of a column or expression, which reads its input
    and nothing else (no table, stage or history), is allowed; any other table function there,
    or a subquery as FLATTEN's input, is refused."""
    inner = node.this
    if not isinstance(inner, exp.Explode):
        written = shorten(inner.sql(dialect) if inner is not None else "")
        message = (
            f"TABLE({written}) is not allowed: TABLE(...) may only wrap FLATTEN(...) of a "
            "column or expression, which reads nothing but its input (table functions such as "
            "RESULT_SCAN, INFER_SCHEMA or QUERY_HISTORY read earlier results, stages or query "
            "history); read the schema's tables instead"
        )
        return Reason("denied_table_function", message)
    if inner.find(exp.Query):
        message = (
            "FLATTEN(...) may flatten a column or an expression, not a subquery: select the "
            "value in a WITH clause and flatten that column"
        )
        return Reason("denied_table_function", message)
    return None


def function_names(node: exp.Func) -> list[str]:
    """Lower-case names a call may run under: its own for unknown functions, else sqlglot's."""
    if isinstance(node, ANONYMOUS):
        return [node.name.lower()]
    return [name.lower() for name in type(node).sql_names()] or [node.key]


def _table_reason(node: exp.Table, dialect: str) -> Reason | None:
    if isinstance(node.this, exp.Func):
        return table_function_reason(node.this, dialect)
    if not isinstance(node.this, exp.Identifier):  # `a.b.c.d`, `ROWS FROM (...)`
        return Reason("unsupported", f"'{shorten(node.sql(dialect))}' is not a plain table name")
    if dialect == "duckdb":
        # DuckDB reads a file or URL named where a table is expected ("replacement scans")
        for part in node.parts:
            if any(c in part.name for c in "/\\:.*?~"):
                message = f"'{part.name}' looks like a file path or URL, not a table"
                return Reason("file_table", message)
    return None


def _dotted_function_reason(node: exp.Dot, dialect: str, allowed: frozenset[str]) -> Reason | None:
    """`schema.f()` calls a user-defined (or remote) function: refused unless the deployment lists
    it; BigQuery's `HLL_COUNT.` family is checked by name (`function_reason`)."""
    prefix = _prefix(node)
    if prefix is None:
        return None  # a method call on a value (DuckDB `'abc'.upper()`); its name is checked
    if _is_family(prefix, dialect) or f"{prefix}.{node.expression.name.lower()}" in allowed:
        return None
    call = shorten(node.sql(dialect))
    message = (
        f"{call} calls a schema-qualified (user-defined) function; if it is a pure function your "
        f"team defined, ask an admin to add it to {functions.SETTING}"
    )
    return Reason("qualified_function", message)


def _prefix(node: exp.Dot) -> str | None:
    """The lower-case dotted name before a called function (`analytics` in `analytics.f(x)`),
    or None when the call is a method on a value."""
    parts = _name_parts(node.this)
    return ".".join(parts) if parts else None


def _name_parts(node: exp.Expr) -> list[str] | None:
    if isinstance(node, exp.Identifier):
        return [node.name.lower()]
    if isinstance(node, exp.Column) and all(isinstance(p, exp.Identifier) for p in node.parts):
        return [p.name.lower() for p in node.parts]
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
        head = _name_parts(node.this)
        return [*head, node.expression.name.lower()] if head else None
    return None


def _is_family(prefix: str, dialect: str) -> bool:
    """BigQuery's dotted families of plain functions (`HLL_COUNT.MERGE`, `NET.HOST`)."""
    return dialect in ("bigquery", "looker") and prefix in denylist.BIGQUERY_FUNCTION_PREFIXES


def _is_session_word(node: exp.Column, dialect: str) -> bool:
    """An unquoted, unqualified `user` (and kin) that the engine reads as a session function."""
    ident = node.this
    return (
        isinstance(ident, exp.Identifier)
        and not ident.quoted
        and not node.table
        and ident.name.lower() in functions.SESSION_WORDS.get(dialect, frozenset())
    )


def _code(node: exp.Expr) -> str | None:
    cls = type(node)
    if cls in ALLOWED or isinstance(node, exp.Func):
        return None
    return _BY_CLASS.get(cls) or _BY_MODULE.get(cls.__module__) or "unsupported"


def _reason(code: str, node: exp.Expr, source: str = "", *, whole: bool = False) -> Reason:
    """The message of `code` for `node`; `whole`: the node is the statement `source` holds."""
    kind = node.key.upper()
    if isinstance(node, exp.Command):
        kind = shorten(f"{node.text('this')} {node.text('expression')}")
    elif code == "not_a_query" and not isinstance(node, (exp.Describe, exp.Show, exp.Summarize)):
        kind = f"'{shorten(source) if whole and source else written(node, source, '')}'"
    return Reason(code, _MESSAGES[code].format(kind=kind))
