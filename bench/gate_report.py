"""SQL gate report: injection payloads, the harmful catalogue, sql-eval gold SQL, gate time.

    uv run python -m bench.gate_report [--no-mariadb]

Prints Markdown for the `## SQL gate` section of BENCHMARKS.md. Exits 1 when a harmful statement
passes the gate, an accepted statement changes, leaks from or is refused by a canary database,
or gold false rejections exceed 0.5% in a dialect; CI runs it. Reads `../shared/corpora` (or
`$QUERYBOT_CORPORA`); the canary databases live in a temporary directory and, for MariaDB,
in a throwaway database on 127.0.0.1:3306.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import sqlglot

from agent.gate import GateSchema, Verdict, check_sql
from tests.gate import canary, corpora, oracle
from tests.gate.fixture_files import load_harmful

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


def gold(times: list[float], failures: list[str]) -> None:
    print("**sql-eval gold SQL** (alternatives split on `;`, `{a, b}` choices expanded) checked")
    print("against the defog-data schemas as each connector names the tables.\n")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-mariadb", action="store_true", help="skip the MariaDB canary")
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
    gold(gold_times, failures)
    timing(gold_times, payload_times)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
