"""`querybot gate`: check one SQL statement with the gate and print the verdict as JSON.

By default the statement is judged as the bot would judge it: against the tables and columns of
the configured warehouse (QUERYBOT_WAREHOUSE, or `--warehouse NAME` of QUERYBOT_CONFIG), in its
dialect, with its row limit, QUERYBOT_ALLOWED_FUNCTIONS and QUERYBOT_ALLOWED_TYPES. `--schema
FILE` judges it offline against a JSON schema instead. A refusal is also told on standard error
against the text that was read (`judge`), so a saved query's author sees their own line and column.

Only argparse and the gate are imported before the arguments are parsed: the settings, the
warehouse connectors (and the LangChain modules the settings import) only once they are needed.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent.gate.report import DIALECTS, judge

if TYPE_CHECKING:
    from agent.gate.schema import GateSchema
    from bot.settings import Settings

ACCEPTED, REFUSED, USAGE, UNCHECKED = 0, 1, 2, 3

EPILOG = f"""\
The verdict is printed as JSON on standard output; a refusal is also explained on
standard error, quoting the statement's own line and column.

exit status: {ACCEPTED} accepted, {REFUSED} refused, {USAGE} a usage error (an option, the SQL
file or the schema file), {UNCHECKED} nothing was checked (the settings or the warehouse
cannot be used).
"""


class Unchecked(Exception):
    """The statement could not be judged (settings or warehouse); the message says what to do."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="querybot gate",
        description="Check one SQL statement with the gate, against the tables and columns of\n"
        "the configured warehouse (or of a schema file), as the bot would check it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "file", nargs="?", metavar="FILE", help="the SQL to check (default, or -: standard input)"
    )
    p.add_argument(
        "--warehouse",
        metavar="NAME",
        help="a warehouse of QUERYBOT_CONFIG (default: its default, or QUERYBOT_WAREHOUSE; "
        "without either, the demo warehouse)",
    )
    p.add_argument(
        "--schema",
        metavar="FILE",
        help='check offline against JSON {"table": {"column": "type"}} (optionally nested '
        "under schema and database) instead of a warehouse; needs --dialect",
    )
    p.add_argument(
        "--dialect",
        choices=sorted(DIALECTS),
        help="the SQL dialect (default: the warehouse's)",
    )
    p.add_argument(
        "--row-limit",
        metavar="N",
        type=int,
        help="LIMIT to add or tighten (default: the warehouse's row limit, QUERYBOT_ROW_LIMIT "
        "or its row_limit in QUERYBOT_CONFIG; 0 for none)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns its exit status (argparse exits with USAGE itself)."""
    p = parser()
    args = p.parse_args(argv)
    if args.row_limit is not None and args.row_limit < 0:
        p.error("--row-limit must be 0 (no limit) or more")
    if args.schema and args.warehouse:
        p.error("--schema checks against the file, not a warehouse: leave out --warehouse")
    if args.schema and not args.dialect:
        p.error("--schema checks offline, without asking a warehouse its dialect: add --dialect")
    name = "standard input" if args.file in (None, "-") else args.file
    try:
        sql = _read_sql(p, args.file)
    except KeyboardInterrupt:
        return 130
    # sqlglot warns when it falls back to a Command for SQL the gate then refuses anyway
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    try:
        schema, row_limit = _judged_by(p, args)
    except Unchecked as exc:
        print(f"Nothing was checked: {exc}", file=sys.stderr)
        return UNCHECKED
    report = judge(sql, schema, row_limit=row_limit or None)
    print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    if report.verdict.ok:
        return ACCEPTED
    print(report.refusal(name), file=sys.stderr)
    return REFUSED


def _read_sql(p: argparse.ArgumentParser, file: str | None) -> str:
    if file in (None, "-"):
        if sys.stdin.isatty():
            print("Reading SQL from standard input; end it with Ctrl-D.", file=sys.stderr)
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        p.error(f"cannot read the SQL file {file}: {exc}")


def _judged_by(p: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[GateSchema, int]:
    """The schema to judge against and the row limit; raises Unchecked."""
    from bot.settings import Settings, SettingsError

    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        raise Unchecked(str(exc)) from None
    if args.schema:
        limit = settings.row_limit if args.row_limit is None else args.row_limit
        return _schema_file(p, args.schema, DIALECTS[args.dialect], settings), limit
    return _warehouse_schema(p, args, settings)


def _schema_file(
    p: argparse.ArgumentParser, path: str, dialect: str, settings: Settings
) -> GateSchema:
    from agent.gate.schema import GateSchema

    try:
        mapping = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(mapping, dict):
            raise ValueError('it should be a JSON object: {"table": {"column": "type"}}')
        schema = GateSchema.from_mapping(
            mapping, dialect, functions=settings.allowed_functions, types=settings.allowed_types
        )
    except (OSError, ValueError) as exc:
        p.error(f"cannot use --schema {path}: {exc}")
    if schema.empty:
        p.error(f'--schema {path} names no tables; write them as {{"table": {{"column": "type"}}}}')
    return schema


def _warehouse_schema(
    p: argparse.ArgumentParser, args: argparse.Namespace, settings: Settings
) -> tuple[GateSchema, int]:
    """The configured warehouse's tables as the bot's gate sees them (its `CatalogSnapshot`),
    read once without profiling; raises Unchecked when the warehouse cannot be read."""
    import os

    from agent.catalog.snapshot import Catalog
    from bot.config import deployment_config
    from bot.settings import SettingsError
    from bot.wiring import open_configured
    from connectors.base import ConnectorError

    try:
        config = deployment_config(settings, os.environ)
    except SettingsError as exc:
        raise Unchecked(str(exc)) from None
    try:
        warehouse = config.pick(args.warehouse)
    except SettingsError as exc:  # no such name, or several and no default: say --warehouse
        p.error(str(exc))
    try:
        connector = open_configured(warehouse, config, settings)
    except SettingsError as exc:
        raise Unchecked(str(exc)) from None
    except ConnectorError as exc:  # WarehouseError: its message names the warehouse
        raise Unchecked(f"{exc.message} {exc.hint}".strip()) from None
    kind = warehouse.spec.partition(":")[0]  # the spec itself may hold a password
    where = (
        f"warehouse {warehouse.name!r} of {config.path}" if config.path else f"the {kind} warehouse"
    )
    try:
        if args.dialect and DIALECTS[args.dialect] != connector.dialect:
            p.error(
                f"--dialect {args.dialect} is not the dialect of {where}, {connector.dialect}: "
                "leave out --dialect, or use --schema FILE to check for another database"
            )
        catalog = Catalog(
            connector,
            profile=False,
            functions=settings.allowed_functions,
            types=settings.allowed_types,
        )
        schema = catalog.gate_schema
    except ConnectorError as exc:
        hint = exc.hint or "run `querybot doctor` to see what is wrong"
        raise Unchecked(f"{where} could not list its tables: {exc.message} {hint}") from None
    finally:
        connector.close()
    if schema.empty:
        raise Unchecked(
            f"{where} has no tables querybot may read, so no statement could be checked "
            "against it; run `querybot doctor`, or check against a file with --schema FILE."
        )
    limit = warehouse.row_limit or settings.row_limit
    return schema, limit if args.row_limit is None else args.row_limit
