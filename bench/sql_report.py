"""SQL databases report: defog gold SQL through SqlConnector against DuckDB, per dialect, and the
harmful catalogue sent to the connector without the gate.

    uv run python -m bench.sql_report [--dialect postgres|mysql|sqlite ...] [--no-catalogue]

Prints Markdown for the `## SQL databases` section of BENCHMARKS.md. Needs the PostgreSQL and
MariaDB servers on 127.0.0.1 and the shared corpora (`../shared/corpora` or
`$QUERYBOT_CORPORA`). Everything it loads lives in throwaway databases and a temporary folder.
Exits 1 when a difference has no reason (the comparison's, or one of the `KNOWN` differences read by
hand) or a harmful statement changed a canary or leaked.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.support import canary, defog_sql
from tests.support.fixture_files import load_harmful

ENGINES = {"postgres": "PostgreSQL 15", "mysql": "MariaDB 10.11", "sqlite": "SQLite"}


def gold(dialects: list[str], cache: Path, failures: list[str]) -> None:
    print("**defog gold SQL through SqlConnector**: each dialect's sql-eval gold (first answer)")
    print("run as a SELECT-only login, compared sql-eval style with the PostgreSQL gold on DuckDB")
    print("over the same rows (copied from the DuckDB reference into each engine).\n")
    print("| engine | questions | ran | matched | differ | failed | median run | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    reports = []
    for dialect in dialects:
        started = time.perf_counter()
        report = defog_sql.evaluate(dialect, defog_sql.pairs(dialect), cache)
        wall = time.perf_counter() - started
        counts = report.counts()
        print(
            f"| {ENGINES[dialect]} | {len(report.outcomes)} | "
            f"{counts['match'] + counts['differs']} | {counts['match']} | {counts['differs']} | "
            f"{counts['error']} | {report.median_run_ms():.1f} ms | {report.load_s:.1f} s "
            f"(whole run {wall:.0f} s) |"
        )
        reports.append(report)
        failures.extend(
            f"{dialect}: unexplained {o.status}: {o.reason} <- {o.sql[:160]}"
            for o in report.unexplained()
        )
    print("\nWhy the others did not match:\n")
    for report in reports:
        for reason, count in report.reasons().most_common():
            print(f"- {ENGINES[report.dialect]}: {count} x {reason}")
    print()


def catalogue(failures: list[str]) -> None:
    print("**Harmful catalogue through SqlConnector, no gate**: each statement as written and,")
    print("when it names a file, aimed at a directory the server can read and write holding a")
    print("secret. Checked: canary tables, objects, roles and locks before and after, files in")
    print("that directory and every path the statements name, the secret or /etc/passwd in rows")
    print("or error messages. A MariaDB user that may write is refused when the connector opens")
    print("(MariaDB's `SET STATEMENT tx_read_only=0 FOR <DDL>` would escape the read-only")
    print("transaction), so only the SELECT-only user runs there.\n")
    print("| engine | login | statements | refused | failed | timed out | ran | changed |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    harmful = load_harmful()
    directory = canary.server_directory()
    sqlite_dir = Path(tempfile.mkdtemp())
    dbs: list[tuple[str, str, object, list[tuple[str, str]]]] = []
    try:
        sqlite = canary.SQLiteCanary(sqlite_dir)
        dbs.append(("SQLite", "sqlite", sqlite, [("file owner", sqlite.url)]))
        postgres = canary.PostgresCanary()
        dbs.append(
            (
                "PostgreSQL",
                "postgres",
                postgres,
                [("SELECT only", postgres.url()), ("table owner", postgres.url(writer=True))],
            )
        )
        mariadb = canary.MariaDBCanary()
        dbs.append(
            (
                "MariaDB",
                "mysql",
                mariadb,
                [("SELECT only", mariadb.url())],
            )
        )
        for engine, dialect, db, logins in dbs:
            written = [h.sql for h in harmful if h.dialect == dialect]
            statements = canary.aimed(written + canary.ESCAPES.get(dialect, []), directory)
            for login, url in logins:
                before = db.snapshot()  # type: ignore[attr-defined]
                files, named = canary.files(directory), canary.named_files(statements)
                run = canary.run_connector(url, statements, timeout_s=1.0)
                changed = (
                    db.snapshot() != before  # type: ignore[attr-defined]
                    or canary.files(directory) != files
                    or canary.named_files(statements) != named
                )
                e = run.errors
                print(
                    f"| {engine} | {login} | {run.executed} | {e['PermissionDenied']} | "
                    f"{e['QueryFailed']} | {e['QueryTimeout']} | {len(run.ran)} | "
                    f"{'yes' if changed else 'no'}{', LEAKED' if run.leaked else ''} |"
                )
                if changed or run.leaked:
                    failures.append(f"{engine} ({login}): changed={changed} leaked={run.leaked}")
    finally:
        for _, _, db, _ in dbs:
            getattr(db, "drop", lambda: None)()
        shutil.rmtree(directory)
        shutil.rmtree(sqlite_dir)
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialect", action="append", choices=defog_sql.DIALECTS)
    parser.add_argument("--no-catalogue", action="store_true")
    args = parser.parse_args()
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        gold(args.dialect or list(defog_sql.DIALECTS), Path(tmp), failures)
    if not args.no_catalogue:
        catalogue(failures)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
