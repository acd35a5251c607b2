"""`querybot gate`: check one SQL text from standard input and print the verdict as JSON.

For teams that keep saved queries: exits 0 when the gate accepts the statement, 1 when it
rejects it, 2 on a usage error (argparse's convention).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from agent.gate.check import check_sql
from agent.gate.schema import GateSchema

DIALECTS = ("duckdb", "bigquery", "mysql", "postgres", "sqlite")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="querybot gate",
        description="Check one SQL statement read from standard input with the SQL gate.",
    )
    p.add_argument("--dialect", required=True, choices=DIALECTS, help="the warehouse's dialect")
    p.add_argument(
        "--schema",
        metavar="FILE",
        help='JSON {"table": {"column": "type"}}, optionally nested under dataset and project; '
        "without it only the safety rules are checked",
    )
    p.add_argument(
        "--row-limit",
        metavar="N",
        type=int,
        default=1000,
        help="LIMIT to add or tighten (default 1000; 0 for none)",
    )
    return p


def main(
    argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.row_limit < 0:
        p.error("--row-limit must be 0 or more")
    schema = GateSchema.from_tables([], args.dialect)
    if args.schema:
        try:
            with open(args.schema, encoding="utf-8") as handle:
                schema = GateSchema.from_mapping(json.load(handle), args.dialect)
        except (OSError, ValueError) as error:
            p.error(f"cannot use --schema {args.schema}: {error}")
    sql = (stdin or sys.stdin).read()
    verdict = check_sql(sql, schema, row_limit=args.row_limit or None)
    out = stdout or sys.stdout
    json.dump(verdict.to_json(), out, indent=2, ensure_ascii=False)
    out.write("\n")
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
