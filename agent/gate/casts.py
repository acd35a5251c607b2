"""Which types a statement may name: an allow list, so a type the gate does not know is refused.

A type name is looked up in the warehouse's catalogue, and the catalogue holds more than the
tables the gate exposes: every PostgreSQL table has a row type of its own name, so
`CAST(NULL AS secret.payroll)` (or `'(,,)'::secret.payroll`, `NULL::payroll[]`, a column
definition list `AS t(a payroll)`) hands its column names to `to_json` or
`jsonb_populate_record`, and the error for a name that is missing ("type ... does not exist")
tells which hidden tables exist. The object identifier types (`'secret.payroll'::regclass`,
`::regtype`, `::oid`) and the pseudo-types (`record`, `anyelement`, `cstring`) are catalogue
lookups too. So a type is accepted only when it is one of the engine's built-in scalar types
(as sqlglot will write it for that engine: what runs is sqlglot's rendering), an array, struct
or map of accepted types where the engine has them, or a name the deployment lists in
`QUERYBOT_ALLOWED_TYPES` (a team's own enum or domain, PostGIS's `geography`).

The PostgreSQL list is checked against a real server by a test: each type, written as sqlglot writes
it, resolves to a type in `pg_catalog`, which PostgreSQL searches before any other schema (unless a
DBA put it later in the login's `search_path`), even beside a table of the same name. The DuckDB
list was checked against DuckDB. MySQL, MariaDB, SQLite, BigQuery and Snowflake have no types a name
reaches beyond their own, but the same allow list holds there, so a spelling sqlglot reads as a
user-defined name is refused everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp
from sqlglot.expressions.datatypes import DType

from agent.gate.functions import parse_allowed
from agent.gate.source import shorten
from agent.gate.verdict import Reason

SETTING = "QUERYBOT_ALLOWED_TYPES"


def _types(names: str) -> frozenset[DType]:
    return frozenset(DType[name] for name in names.split())


_INTEGERS = "TINYINT SMALLINT INT BIGINT"
_NUMBERS = f"{_INTEGERS} DECIMAL FLOAT DOUBLE"
_TEXT = "CHAR NCHAR VARCHAR NVARCHAR TEXT"
_BYTES = "BINARY VARBINARY BLOB"
_TIMES = "DATE TIME DATETIME TIMESTAMP"
#: MySQL's sized kinds, written TEXT and BLOB for the engines that have those names (PostgreSQL
#: has no BLOB: `CAST(x AS longblob)` would run as `CAST(x AS BLOB)`, a name a table may have).
_SIZED_TEXT = "TINYTEXT MEDIUMTEXT LONGTEXT"
_SIZED_BYTES = "TINYBLOB MEDIUMBLOB LONGBLOB"

#: Built-in scalar types per dialect, as sqlglot models them (`DataType.Type`).
BUILTIN: dict[str, frozenset[DType]] = {
    "postgres": _types(
        f"""{_NUMBERS} {_TEXT} {_SIZED_TEXT} {_BYTES} {_TIMES} BOOLEAN BIT BPCHAR DATETIME2
        SMALLDATETIME TIMETZ TIMESTAMPTZ TIMESTAMPNTZ INTERVAL JSON JSONB UUID XML INET MONEY
        NAME POINT POLYGON ROWVERSION INT4RANGE INT8RANGE NUMRANGE DATERANGE TSRANGE TSTZRANGE
        INT4MULTIRANGE INT8MULTIRANGE NUMMULTIRANGE DATEMULTIRANGE TSMULTIRANGE TSTZMULTIRANGE"""
    ),
    "duckdb": _types(
        f"""{_NUMBERS} {_TEXT} {_SIZED_TEXT} {_BYTES} {_SIZED_BYTES} {_TIMES} BOOLEAN BIT
        BPCHAR DATETIME2 SMALLDATETIME TIMETZ TIMESTAMPTZ TIMESTAMPNTZ TIMESTAMPLTZ TIMESTAMP_S
        TIMESTAMP_MS TIMESTAMP_NS TIME_NS INTERVAL JSON JSONB UUID ROWVERSION BIGDECIMAL DECFLOAT
        BIGNUM INT128 UINT128 UTINYINT USMALLINT UINT UBIGINT VARIANT GEOMETRY"""
    ),
    "mysql": _types(
        f"""{_NUMBERS} {_TEXT} {_SIZED_TEXT} {_BYTES} {_SIZED_BYTES} {_TIMES} BOOLEAN BIT
        MEDIUMINT UTINYINT USMALLINT UMEDIUMINT UINT UBIGINT UDECIMAL UDOUBLE TIMESTAMPTZ
        TIMESTAMPLTZ YEAR JSON CHARACTER_SET"""
    ),
    "sqlite": _types(
        f"{_NUMBERS} {_TEXT} {_SIZED_TEXT} {_BYTES} {_SIZED_BYTES} {_TIMES} BOOLEAN JSON"
    ),
    "bigquery": _types(
        f"""{_NUMBERS} {_TEXT} {_BYTES} {_TIMES} BOOLEAN TIMESTAMPTZ BIGDECIMAL INTERVAL JSON
        GEOGRAPHY"""
    ),
    "snowflake": _types(
        f"""{_NUMBERS} {_TEXT} {_SIZED_TEXT} {_BYTES} {_TIMES} BOOLEAN TIMESTAMPTZ TIMESTAMPNTZ
        TIMESTAMPLTZ VARIANT JSON GEOGRAPHY GEOMETRY DECFLOAT"""
    ),
}

#: Types built from other types; their element and field types are checked on their own as the
#: walk reaches them (`text[]`, `STRUCT<a INT64>`, `MAP(INT, TEXT)`, DuckDB's `ENUM('a')`).
CONTAINERS: dict[str, frozenset[DType]] = {
    "postgres": _types("ARRAY"),
    "duckdb": _types("ARRAY LIST STRUCT MAP UNION ENUM"),
    "mysql": frozenset(),
    "sqlite": frozenset(),
    "bigquery": _types("ARRAY STRUCT RANGE"),
    "snowflake": _types("ARRAY OBJECT STRUCT MAP VECTOR"),
}

#: Built-in types sqlglot reads as names (user-defined, object identifier or pseudo types), by
#: lower-case name. `regconfig` names a text search configuration, not a table.
BUILTIN_NAMES: dict[str, frozenset[str]] = {
    "postgres": frozenset(
        {
            "cidr",
            "macaddr",
            "macaddr8",
            "box",
            "circle",
            "line",
            "lseg",
            "path",
            "polygon",
            "varbit",
            "tsvector",
            "tsquery",
            "jsonpath",
            "regconfig",
            "char",  # written `"char"`: the one-byte internal type
        }
    ),
    "duckdb": frozenset({"varint"}),
}

#: Dialects read as another's: Looker writes GoogleSQL, MariaDB is MySQL's.
_SAME_AS = {"looker": "bigquery", "mariadb": "mysql"}


def parse_allowed_types(value: str | Iterable[str]) -> frozenset[str]:
    """A deployment's trusted type names: comma-separated (or listed), case-blind, each `name` or
    `schema.name`, quotes around parts dropped."""
    return parse_allowed(value, setting=SETTING, what="type")


def type_reason(node: exp.DataType, dialect: str, allowed: frozenset[str]) -> Reason | None:
    """Why the type `node` (a cast target, column definition or element type) is refused, or
    None when it is a built-in of `dialect` or listed in `allowed` (parse_allowed_types)."""
    if isinstance(node, exp.IntervalSpan):
        return None  # the `DAY TO SECOND` of an interval: units, not a type
    dialect = _SAME_AS.get(dialect, dialect)
    kind = DType.INTERVAL if isinstance(node.this, exp.Interval) else node.this  # INTERVAL DAY
    if type(node) is exp.DataType and kind in BUILTIN.get(dialect, frozenset()):
        return None
    if type(node) is exp.DataType and kind in CONTAINERS.get(dialect, frozenset()):
        return None
    name = type_name(node, dialect)
    if name in BUILTIN_NAMES.get(dialect, frozenset()) or name in allowed:
        return None
    message = (
        f"{shorten(name)} is not one of the {dialect} built-in types the gate accepts (a type "
        f"name reaches the database's catalogue: tables' row types and other user-defined or "
        f"system types); use a built-in type such as text, numeric, date or timestamp, or, if "
        f"it is a type your team defined, ask an admin to add it to {SETTING}"
    )
    return Reason("denied_type", message)


def type_name(node: exp.DataType, dialect: str) -> str:
    """The name to match against the deployment's list: a user-defined name as the engine folds
    it (unquoted parts lower-cased, quoted ones kept), else the type as sqlglot writes it."""
    kind = node.this
    if isinstance(node, (exp.PseudoType, exp.ObjectIdentifier)) or isinstance(kind, str):
        return str(kind).lower()
    if kind == DType.USERDEFINED:
        written = node.args.get("kind")
        if isinstance(written, exp.Expr):
            parts: list[exp.Expr] = [
                n for n in written.walk(bfs=False) if isinstance(n, exp.Identifier)
            ]
            return ".".join(_folded(part) for part in parts or [written])
        return str(written or "").lower()
    return exp.DataType(this=kind).sql(dialect).lower()


def _folded(part: exp.Expr) -> str:
    if isinstance(part, exp.Identifier) and part.quoted:
        return part.name
    return part.name.lower() if part.name else part.sql().lower()
