"""SQL gate report: injection payloads, the harmful catalogue (through the gate, and through the
DuckDB, files sandbox, BigQuery and Snowflake connectors without it), sql-eval gold SQL, gate time
and its bounds, and resource attacks (queries, files shared in a thread, HTTP requests).

    uv run python -m bench.gate_report [--no-mariadb] [--no-bigquery] [--no-snowflake]
                                       [--no-resources]

Prints Markdown for the `## SQL gate` section of BENCHMARKS.md. Exits 1 when a harmful statement
passes the gate, an accepted statement changes, leaks from or is refused by a canary database, a
harmful statement sent to a connector changes or leaks anything, gold false rejections exceed
0.5% in a dialect, or a resource attack is not stopped by a bound (except those only a DBA can
set, shown for the README's list); CI runs it. Reads `../shared/corpora` (or
`$QUERYBOT_CORPORA`); the canary databases live in a temporary directory, for MariaDB in a
throwaway database on 127.0.0.1:3306, for BigQuery in the local bqemulator, for Snowflake in
fakesnow's server (the tests' `Emulator` and `FakesnowServer`), both started and stopped here.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path

import sqlglot

from agent.gate import GateSchema, Verdict, check_sql
from bench import gate_bounds
from bench.resources import table
from connectors import open_connector
from connectors.base import Connector
from connectors.sandbox.sandboxes import Sandboxes
from tests.support import canary, corpora, oracle
from tests.support import snowflake_server as fakesnow
from tests.support.bigquery_emulator import Emulator, ensure_venv
from tests.support.fixture_files import load_cases, load_harmful
from tests.support.side_venv import EmulatorError, cache_dir
from tests.support.snowflake_canary import ESCAPES as SNOWFLAKE_ESCAPES
from tests.support.snowflake_canary import SnowflakeCanary
from tests.support.snowflake_recording import Recorder

MAX_FALSE_REJECTIONS = 0.005
Canary = canary.DuckDBCanary | canary.SQLiteCanary | canary.MariaDBCanary


def timed(sql: str, schema: GateSchema, times: list[float]) -> Verdict:
    start = time.perf_counter()
    verdict = check_sql(sql, schema)
    times.append(time.perf_counter() - start)
    return verdict


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def payloads(times: list[float], failures: list[str]) -> dict[str, list[str]]:
    """Check every payload in every dialect; return the accepted normalised SQL per dialect."""
    lines = corpora.payloads()
    print(f"**Injection payloads.** {len(lines):,} distinct payload lines, each alone and spliced")
    print("into `SELECT id, name FROM customers WHERE name = '…'` and `… WHERE id = …`, checked")
    print("against the canary schema (customers, orders, users).\n")
    print("| dialect | statements tried | accepted | accepted and harmful |")
    print("|---|---:|---:|---:|")
    accepted: dict[str, list[str]] = {}
    for dialect in corpora.DIALECTS:
        schema = canary.schema(dialect)
        statements = [s for p in lines for s in corpora.spliced(p).values()]
        verdicts = [timed(s, schema, times) for s in statements]
        ok = [v.sql for v in verdicts if v.ok]
        exposed = set(canary.table_names(dialect).values())
        harmful = [
            v.sql
            for v in verdicts
            if v.ok and (oracle.harm(v.sql, dialect) or not set(v.tables) <= exposed)
        ]
        failures.extend(f"payload passed as harmful ({dialect}): {sql}" for sql in harmful)
        accepted[dialect] = list(dict.fromkeys(ok))
        print(f"| {dialect} | {len(statements):,} | {len(ok):,} | {len(harmful)} |")
    print()
    return accepted


def canaries(accepted: dict[str, list[str]], use_mariadb: bool, failures: list[str]) -> None:
    print("**Canary execution** of every distinct accepted statement, on the hardened connection")
    print("production uses and on one that would let harm through. Checked: table checksums and")
    print("lists before and after, files beside the database (DuckDB, SQLite), users (MariaDB),")
    print("a secret marker or /etc/passwd in results, and engine refusals of writes or file or")
    print("network access (any refusal means the gate let such a statement through).\n")
    print("| engine | statements | connection | engine errors | refused | leaked | changed |")
    print("|---|---:|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        dbs: list[tuple[str, str, Canary]] = [
            ("DuckDB", "duckdb", canary.DuckDBCanary(Path(tmp) / "duckdb")),
            ("SQLite", "sqlite", canary.SQLiteCanary(Path(tmp) / "sqlite")),
        ]
        mariadb = None
        if use_mariadb:
            try:
                mariadb = canary.MariaDBCanary()
                dbs.append(("MariaDB", "mysql", mariadb))
            except Exception as error:
                failures.append(f"MariaDB canary unavailable: {error}")
        try:
            for engine, dialect, db in dbs:
                before = db.snapshot()
                for hardened in (True, False):
                    run = db.run(accepted[dialect], hardened=hardened)
                    changed = db.snapshot() != before
                    label = db.CONNECTIONS[0 if hardened else 1]
                    print(
                        f"| {engine} | {run.executed:,} | {label} | {run.failed} | "
                        f"{len(run.blocked)} | {len(run.leaked)} | {'yes' if changed else 'no'} |"
                    )
                    if run.blocked or run.leaked or changed:
                        failures.append(f"{engine} canary ({label}): {run.blocked or run.leaked}")
        finally:
            if mariadb is not None:
                mariadb.drop()
    print()


def catalogue(failures: list[str]) -> None:
    harmful = load_harmful()
    passed_known = passed_unknown = wrong_reason = 0
    for item in harmful:
        known = check_sql(item.sql, canary.schema(item.dialect))
        unknown = check_sql(item.sql, GateSchema.from_tables([], item.dialect))
        passed_known += known.ok
        passed_unknown += unknown.ok
        wrong_reason += item.code not in [r.code for r in known.reasons]
        if known.ok or unknown.ok:
            failures.append(f"harmful statement passed ({item.dialect}): {item.sql}")
    per_dialect = Counter(h.dialect for h in harmful)
    spread = ", ".join(f"{d} {per_dialect[d]}" for d in corpora.DIALECTS)
    print(f"**Harmful catalogue** (`tests/fixtures/gate/harmful.sql`): {len(harmful)} statements")
    print(f"({spread}).\n")
    print("| schema | passed | rejected for another reason than the catalogued one |")
    print("|---|---:|---:|")
    print(f"| known (canary tables) | {passed_known} | {wrong_reason} |")
    print(f"| unknown (safety rules only) | {passed_unknown} | |\n")


#: Where DuckDB's INSTALL and persistent secrets would write.
DUCKDB_HOME = Path.home() / ".duckdb"


def connector_catalogue(use_bigquery: bool, use_snowflake: bool, failures: list[str]) -> None:
    """The whole catalogue plus each engine's escapes, sent to the connectors' `run` unchecked."""
    print("**Harmful catalogue through the DuckDB, files sandbox, BigQuery and Snowflake")
    print("connectors, no gate**: every dialect's statements plus each engine's escapes")
    print("(`canary.ESCAPES`, Snowflake's in `tests/support/snowflake_canary.py`), as written")
    print("and aimed at a directory holding a secret, on the canary tables (for the sandbox,")
    print("uploaded as CSV files through the loader; for BigQuery, a dataset in the local")
    print("bqemulator; for Snowflake, a database in fakesnow's server, EXPLAIN answered as")
    print("Snowflake would; both logins may write anything). Checked: tables, settings, attached")
    print("databases, datasets and files before and after; the secret or /etc/passwd in rows or")
    print("error messages. *Before the engine*: refused by the connector itself, before any query")
    print("or job started.\n")
    print(
        "| connector | statements | refused | failed | timed out | ran | before the engine |",
        end="",
    )
    print(" changed |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        duck = canary.DuckDBCanary(Path(tmp) / "duckdb")
        connector = open_connector(duck.spec, data_dir=duck.directory)
        watched = [duck.directory, DUCKDB_HOME]
        _catalogue_row("DuckDB (`duckdb:PATH`)", connector, duck.snapshot, watched, failures)

        sandboxes, thread = Sandboxes(Path(tmp) / "sandboxes"), "T0:C0:1.0"
        for upload in canary.write_csvs(Path(tmp) / "incoming"):
            sandboxes.load(thread, upload, upload.name)
        secrets, db = Path(tmp) / "secrets", sandboxes.path(thread)
        canary.write_secrets(secrets)
        snapshot = partial(canary.duckdb_snapshot, db)
        watched = [secrets, db.parent, DUCKDB_HOME]
        _catalogue_row("files sandbox", sandboxes.open(thread), snapshot, watched, failures)

        if use_bigquery:
            _bigquery_row(Path(tmp), secrets, failures)
        if use_snowflake:
            _snowflake_row(Path(tmp), secrets, failures)
    print()


def _catalogue_row(
    label: str,
    connector: Connector,
    snapshot: Callable[[], object],
    watched: list[Path],
    failures: list[str],
    escapes: list[str] | None = None,
) -> None:
    """One connector's row; the statements are aimed at `watched[0]`, which holds the secret.
    `escapes`: the engine's own, tried on top of the catalogue (by default, DuckDB's or
    BigQuery's)."""
    if escapes is None:
        escapes = canary.ESCAPES["bigquery" if connector.dialect == "bigquery" else "duckdb"]
    statements = canary.aimed([h.sql for h in load_harmful()] + escapes, watched[0])
    try:
        run = canary.contain(connector, statements, snapshot, watched, timeout_s=5.0)
    finally:
        connector.close()
    refused, timed_out = run.errors["PermissionDenied"], run.errors["QueryTimeout"]
    print(
        f"| {label} | {run.executed} | {refused} | {run.failed - refused - timed_out} | "
        f"{timed_out} | {len(run.ran)} | {len(run.stopped)} | "
        f"{', '.join(run.changed) or 'no'}{', LEAKED' if run.leaked else ''} |"
    )
    if run.changed or run.leaked:
        failures.append(f"{label}: changed {run.changed}, leaked {run.leaked}")


def _bigquery_row(tmp: Path, secrets: Path, failures: list[str]) -> None:
    """The BigQuery row, on a bqemulator started for it."""
    try:
        executable = ensure_venv(cache_dir() / "bqemulator-venv")
        emulator = Emulator(executable, tmp / "bqemulator.log", "demo")
    except EmulatorError as error:
        failures.append(f"BigQuery emulator unavailable: {error}")
        return
    try:
        emulator.wait_ready()
        bigquery = canary.BigQueryCanary(emulator.url, emulator.project)
        try:
            connector = bigquery.connector()
            _catalogue_row(
                "BigQuery (bqemulator)", connector, bigquery.snapshot, [secrets], failures
            )
        finally:
            bigquery.drop()
    except EmulatorError as error:
        failures.append(f"BigQuery emulator unavailable: {error}")
    finally:
        emulator.stop()


def _snowflake_row(tmp: Path, secrets: Path, failures: list[str]) -> None:
    """The Snowflake row, on a fakesnow server started for it."""
    try:
        executable = fakesnow.ensure_venv(cache_dir() / "fakesnow-venv")
        server = fakesnow.FakesnowServer(executable, tmp / "fakesnow.log")
    except EmulatorError as error:
        failures.append(f"fakesnow unavailable: {error}")
        return
    try:
        server.wait_ready()
        database = SnowflakeCanary(server)
        connector = database.connector(Recorder(server=server.connect_kwargs()))
        label = "Snowflake (fakesnow)"
        _catalogue_row(label, connector, database.snapshot, [secrets], failures, SNOWFLAKE_ESCAPES)
    except EmulatorError as error:
        failures.append(f"fakesnow unavailable: {error}")
    finally:
        server.stop()


def gold(times: list[float], failures: list[str]) -> None:
    print("**sql-eval gold SQL** (alternatives split on `;`, `{a, b}` choices expanded) checked")
    print("against the defog-data schemas as each connector names the tables. sql-eval has no")
    left_out = len(corpora.gold("postgres")) - len(corpora.gold("snowflake"))
    print("Snowflake gold: PostgreSQL's is transpiled by sqlglot, leaving out the")
    print(f"{left_out} alternatives it cannot write or that call a function Snowflake lacks")
    print("(`corpora.LACKING`: AGE()).\n")
    print("| dialect | gold queries | rejected | rate |")
    print("|---|---:|---:|---:|")
    rejected_all: list[tuple[corpora.Gold, Verdict]] = []
    for dialect in corpora.GOLD_DIALECTS:
        answers = corpora.gold(dialect)
        rejected = []
        for answer in answers:
            verdict = timed(answer.sql, corpora.defog_schema(answer.db, dialect), times)
            if not verdict.ok:
                rejected.append((answer, verdict))
        rate = len(rejected) / len(answers)
        print(f"| {dialect} | {len(answers)} | {len(rejected)} | {rate:.2%} |")
        if rate > MAX_FALSE_REJECTIONS:
            failures.append(f"{dialect} gold false rejections {rate:.2%}")
        rejected_all.extend(rejected)
    print()
    if rejected_all:
        print("False rejections:\n")
    for answer, verdict in rejected_all:
        reasons = "; ".join(str(r) for r in verdict.reasons)
        print(f"- {answer.dialect}, {answer.db}: `{answer.sql[:90]}…` — {reasons}")
    print()


def timing(gold_times: list[float], payload_times: list[float]) -> None:
    print(f"**Gate time** per statement (sqlglot {sqlglot.__version__}, pure Python, one core):\n")
    print("| statements | count | median | p95 | max |")
    print("|---|---:|---:|---:|---:|")
    for label, values in (("sql-eval gold", gold_times), ("payload statements", payload_times)):
        ordered = sorted(values)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(
            f"| {label} | {len(values):,} | {ms(statistics.median(values))} | {ms(p95)} | "
            f"{ms(ordered[-1])} |"
        )
    print()


#: Golden refusal cases of issue 15's classes (tests/fixtures/gate), checked with no schema, so a
#: refusal owes nothing to the tables: the file, its title here, whether it spells code points.
ISSUE_CLASSES = (
    ("functions.sql", "unknown, system and session functions, variables", False),
    ("invisible.sql", "invisible and non-ASCII space characters", True),
    ("types.sql", "types beyond the engine's built-in ones (row types, catalogue lookups)", False),
)
_CODE_POINT = re.compile(r"<U\+([0-9A-F]{4,6})>")


def refusal_classes(failures: list[str]) -> None:
    print("**Refusal classes** (golden fixtures in `tests/fixtures/gate`, every dialect, checked")
    print("with no schema): each must be refused with its reason code.\n")
    print("| class | fixture | refusal cases | refused with the expected code |")
    print("|---|---|---:|---:|")
    for fixture, title, spelled in ISSUE_CLASSES:
        cases = [c for c in load_cases(fixture) if c.code]
        refused = 0
        for case in cases:
            sql = _CODE_POINT.sub(lambda m: chr(int(m[1], 16)), case.sql) if spelled else case.sql
            verdict = check_sql(sql, GateSchema.from_tables([], case.dialect))
            if not verdict.ok and case.code in [r.code for r in verdict.reasons]:
                refused += 1
            else:
                failures.append(f"{fixture} ({case}) not refused as {case.code}")
        print(f"| {title} | `{fixture}` | {len(cases)} | {refused} |")
    print()


def resources(failures: list[str]) -> None:
    """Resource attacks: queries (approved), files shared in a thread, HTTP requests; each run
    against the default bounds in a fresh process."""
    from bench import resource_files, resource_http, resource_queries

    print("**Resource attacks** with the default bounds, each in a fresh process: the process's")
    print("peak RSS, the most temp or disk it wrote, and the bound that stopped it.\n")
    rows = [
        *resource_queries.resource_rows(),
        *resource_files.resource_rows(),
        *resource_http.resource_rows(),
    ]
    print("\n".join(table(rows)))
    print()
    for row in rows:
        if not row.ok and not row.left_to_dba:
            failures.append(f"resource attack not stopped ({row.engine}): {row.attack}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-mariadb", action="store_true", help="skip the MariaDB canary")
    parser.add_argument(
        "--no-bigquery", action="store_true", help="skip the BigQuery emulator's catalogue run"
    )
    parser.add_argument(
        "--no-snowflake", action="store_true", help="skip fakesnow's catalogue run (a few seconds)"
    )
    parser.add_argument(
        "--no-resources", action="store_true", help="skip the resource attacks (about 3 minutes)"
    )
    args = parser.parse_args(argv)
    missing = corpora.missing()
    if missing:
        print(f"gate report: {missing}", file=sys.stderr)
        return 2
    failures: list[str] = []
    payload_times: list[float] = []
    gold_times: list[float] = []
    print("## SQL gate\n")
    accepted = payloads(payload_times, failures)
    canaries(accepted, not args.no_mariadb, failures)
    catalogue(failures)
    connector_catalogue(not args.no_bigquery, not args.no_snowflake, failures)
    gold(gold_times, failures)
    timing(gold_times, payload_times)
    refusal_classes(failures)
    if not args.no_resources:
        resources(failures)
    gate_bounds.report()
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
