"""The sqlglot dialect the gate writes MySQL-family statements in: MySQL as sqlglot writes it,
except where MariaDB rejects what sqlglot writes.

One connector serves MySQL 5.7/8 and MariaDB under the one dialect name `mysql`, so the gate cannot
tell which server will run a statement. It reads (and checks) statements as `mysql` and writes the
accepted one with this dialect, whose every change is read the same way by both servers:

- `a REGEXP b` (and `RLIKE`) stays an operator: sqlglot writes `REGEXP_LIKE(a, b)`, a function
  MariaDB does not have (nor MySQL before 8.0.4); MySQL documents REGEXP as its synonym.
  With a flags argument, `REGEXP_LIKE(a, b, 'i')` is kept (MySQL 8 only; MariaDB says so).
- `FOR SYSTEM_TIME AS OF / BETWEEN ... AND / FROM ... TO / ALL` (MariaDB's system-versioned
  tables) is written back as such, not as `FOR TIMESTAMP ...` with a tuple; MySQL has no such
  clause either way.
- `a ->> '$.p'` becomes `JSON_UNQUOTE(JSON_EXTRACT(a, '$.p'))`, which MySQL documents as its
  meaning; MariaDB has no JSON arrow operators.
- `MEDIAN(x) OVER (...)` (MariaDB's window function) stays MEDIAN, not `PERCENTILE_CONT(x, 0.5)`,
  which neither server reads; MySQL has no MEDIAN either way.

What else sqlglot's MySQL generator rewrites (IFNULL to COALESCE, `LIMIT a, b` to `LIMIT b
OFFSET a`, `CONVERT(x USING cs)` to `CAST(x AS CHAR CHARACTER SET cs)`, quoted INTERVAL
amounts, ...) was run on MariaDB 10.11 and is read as written (the MariaDB gate tests).
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.generators.mysql import MySQLGenerator

DIALECT = "mariadb"

#: The dialect the gate writes an accepted statement in, by the dialect it read it in.
WRITERS = {"mysql": DIALECT}

#: Parents under which `a REGEXP b` needs parentheses to keep its meaning (`1 = a REGEXP b`
#: reads as `(1 = a) REGEXP b`); under AND, OR, a WHERE or a function argument it needs none.
_OPERATORS = (exp.Binary, exp.Unary, exp.Predicate)
_LOOSE = (exp.Connector, exp.Paren)


def writer(dialect: str) -> str:
    """The dialect an accepted statement read as `dialect` is written in."""
    return WRITERS.get(dialect, dialect)


class MariaDB(MySQL):
    """MySQL as sqlglot reads it, written so MariaDB reads it too (registered as "mariadb")."""

    class Generator(MySQLGenerator):
        SUPPORTS_MEDIAN = True
        TRANSFORMS: ClassVar = {
            **MySQLGenerator.TRANSFORMS,
            exp.JSONExtractScalar: lambda self, e: self.func(
                "JSON_UNQUOTE", self.func("JSON_EXTRACT", e.this, e.expression)
            ),
        }

        def regexplike_sql(self, expression: exp.RegexpLike) -> str:
            if expression.args.get("flag") or expression.args.get("full_match"):
                return self.function_fallback_sql(expression)
            parent = expression.parent
            if isinstance(parent, _OPERATORS) and not isinstance(parent, _LOOSE):
                # written as sqlglot writes brackets, so the text reads back as itself (pretty)
                return self.sql(exp.Paren(this=expression.copy()))
            return self.binary(expression, "REGEXP")

        def version_sql(self, expression: exp.Version) -> str:
            kind = expression.text("kind")
            value = expression.args.get("expression")
            if expression.name != "TIMESTAMP" or kind == "CONTAINED IN":
                self.unsupported(f"MariaDB has no FOR {expression.name} {kind} clause")
                return super().version_sql(expression)
            if kind == "ALL":
                return "FOR SYSTEM_TIME ALL"
            if isinstance(value, exp.Tuple) and len(value.expressions) == 2:
                start, end = (self.sql(v) for v in value.expressions)
                joiner = "AND" if kind == "BETWEEN" else "TO"
                return f"FOR SYSTEM_TIME {kind} {start} {joiner} {end}"
            return f"FOR SYSTEM_TIME {kind} {self.sql(value)}"
