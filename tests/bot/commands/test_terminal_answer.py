"""Issue 17 item 4 in the terminal: `querybot ask` words an answer as Slack does. A single value
prints as "Count: 20,278", not a one-cell table headed `count_star()`; counts agree in number
("1 row"); the SQL the person just approved is printed once, with the proposal, and the answer
refers to it. Through the real CLI on the demo warehouse with a scripted model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agent.outcome import Answer, Outcome, Proposal
from bot.cli import main
from bot.commands.terminal import APPROVED_ABOVE, outcome_text, proposal_text, table_text
from connectors.duckdb.connector import DuckDBConnector
from tests.support.cli_process import demo_env, run_querybot

COUNT = "SELECT COUNT(*) FROM orders"
#: COUNT as the gate writes it (and the card, the audit log and the answer hold it).
COUNT_PRETTY = "SELECT\n  COUNT(*)\nFROM demo.main.orders"
#: An id, a midnight timestamp, a month and a measure large enough for separators.
FIRST_ORDERS = (
    "SELECT order_id, CAST(order_date AS TIMESTAMP) AS ordered_at, "
    "date_trunc('month', CAST(order_date AS TIMESTAMP)) AS month, "
    "customer_id * 1000 AS customers FROM orders ORDER BY order_id LIMIT 3"
)
BY_STATUS = "SELECT status, COUNT(*) FROM orders GROUP BY status ORDER BY status"


def script(tmp_path: Path, sql: str) -> Path:
    path = tmp_path / "script.jsonl"
    reply = {"kind": "sql", "explanation": "Counts orders.", "sql": sql}
    path.write_text(json.dumps(reply) + "\n")
    return path


def demo_rows(data: Path, sql: str) -> list[tuple]:
    warehouse = DuckDBConnector(data / "demo.duckdb")
    try:
        return [tuple(r) for r in warehouse.run(sql, max_rows=100, timeout_s=30).rows]
    finally:
        warehouse.close()


def ask_process(tmp_path: Path, sql: str, question: str) -> str:
    """What a `querybot ask` process prints for `question` when its scripted model writes
    `sql` and the person approves it."""
    env = demo_env(tmp_path / "data", QUERYBOT_MODEL=f"scripted:{script(tmp_path, sql)}")
    done = run_querybot(["ask", question], cwd=tmp_path, env=env, input="y\n")
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_a_single_value_prints_as_a_labelled_line_in_a_querybot_process(tmp_path: Path) -> None:
    out = ask_process(tmp_path, COUNT, "how many orders?")
    [(count,)] = demo_rows(tmp_path / "data", COUNT)
    answer = out[out.index("Run this query? [y/N] ") + len("Run this query? [y/N] ") :]
    assert answer.startswith(f"Count: {count:,}\n\nSources: demo.main.orders · duckdb · 1 row · ")
    assert "count_star()" not in out and "1 rows" not in out
    assert out.count(COUNT_PRETTY) == 1 and out.index(COUNT_PRETTY) < out.index("Run this query?")
    assert f"\n\n{APPROVED_ABOVE}\n" in answer


@pytest.mark.slow
def test_ids_dates_and_months_read_plainly_in_a_querybot_process(tmp_path: Path) -> None:
    """Issue 38 item 5: `order_id 100001`, not 100,001; a midnight timestamp as its date and a
    date_trunc('month') as its month, never `T00:00:00`; headers in words."""
    out = ask_process(tmp_path, FIRST_ORDERS, "the first orders?")
    rows = demo_rows(tmp_path / "data", FIRST_ORDERS)
    assert rows[0][0] >= 100_000  # big enough that a separator would show
    table = out[out.index("Run this query? [y/N] ") + len("Run this query? [y/N] ") :]
    lines = table.splitlines()
    assert lines[0].split("  ")[0] == "Order id" and "Ordered at" in lines[0]
    for line, (order_id, day, month, customers) in zip(lines[2:], rows, strict=False):
        cells = line.split()
        assert cells == [str(order_id), day.date().isoformat(), month.strftime("%Y-%m"),
                         f"{customers:,}"]  # fmt: skip
    assert "T00:00:00" not in out and f"{rows[0][0]:,}" not in table


@pytest.mark.slow
def test_a_table_labels_an_expression_column_and_counts_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script(tmp_path, BY_STATUS)}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QUERYBOT_CONFIG", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["ask", "orders by status?"]) == 0
    out = capsys.readouterr().out
    rows = demo_rows(tmp_path / "data", BY_STATUS)
    width = max(len(s) for s, _ in rows)
    assert f"[y/N] {'Status'.ljust(width)}  Count\n" in out  # the answer starts at the prompt
    assert f"\n{len(rows)} rows\nSources: demo.main.orders · duckdb · {len(rows)} rows · " in out
    assert out.count("GROUP BY\n  status") == 1  # the proposal's; the answer refers to it


def answer(sql: str, rows: list[list[object]], columns: int = 1) -> Answer:
    return Answer(
        question="q",
        sql=sql,
        explanation="",
        tables=["demo.main.orders"],
        columns=[f"c{i}" for i in range(columns)],
        rows=rows,
        total_rows=len(rows),
        capped=False,
        elapsed_s=0.01,
        connector="duckdb",
        approved_by="alice",
    )


def test_an_empty_result_before_its_loosened_query_refers_to_the_sql_approved_above() -> None:
    empty = answer("SELECT n FROM t WHERE x = 'Nort'", [])
    loosened = Proposal(
        proposal_id="p2",
        question="q",
        sql="SELECT n FROM t WHERE x ILIKE '%nort%'",
        explanation="Looser.",
        tables=["t"],
        sql_sha256="ab" * 32,
    )
    outcome = Outcome(kind="proposal", message="Nothing matched.", proposal=loosened, answer=empty)
    text = outcome_text(outcome, approved_sql=empty.sql)
    assert empty.sql not in text and APPROVED_ABOVE in text and loosened.sql in text
    assert "\n0 rows\n" in text
    assert empty.sql in outcome_text(outcome)  # not approved above: printed


def test_counts_agree_in_number() -> None:
    wide = answer("SELECT 1", [list(range(5))], columns=5)  # too wide for lines: a table
    one = outcome_text(Outcome(kind="answer", answer=wide))
    assert "\n1 row\n" in one and " · 1 row · " in one and "1 rows" not in one
    two = outcome_text(Outcome(kind="answer", answer=answer("SELECT 1", [[1], [2]])))
    assert "\n2 rows\n" in two and " · 2 rows · " in two
    capped = Answer(**{**answer("SELECT 1", [[1]]).__dict__, "total_rows": 1000, "capped": True})
    text = outcome_text(Outcome(kind="answer", answer=capped))
    assert "\n1,000+ rows (first 1 shown)\n" in text and " · 1,000+ rows · " in text


def test_a_table_reads_ids_dates_and_times_as_the_slack_table_does() -> None:
    text = table_text(
        ["customer_id", "signup_month", "last_seen", "orders"],
        [[100001, "2026-08-01", "2026-08-01T13:45:00", 12345],
         [100002, "2026-09-01", "2026-08-02T09:00:00", 7]],
    )  # fmt: skip
    assert text.splitlines() == [
        "Customer id  Signup month  Last seen            Orders",
        "-----------  ------------  -------------------  ------",
        "100001       2026-08       2026-08-01 13:45:00  12,345",
        "100002       2026-09       2026-08-02 09:00:00  7",
    ]


def test_a_query_that_reads_no_tables_says_so_instead_of_an_empty_list() -> None:
    select_one = Proposal(
        proposal_id="p1", question="q", sql="SELECT 1", explanation="One.", tables=[],
        sql_sha256="ab" * 32,
    )  # fmt: skip
    assert "\nReads: no tables" in proposal_text(select_one)
    ran = Answer(**{**answer("SELECT 1", [[1], [2]]).__dict__, "tables": []})
    text = outcome_text(Outcome(kind="answer", answer=ran))
    assert "Sources: no tables · duckdb · 2 rows · " in text and "Sources:  ·" not in text


def test_an_empty_period_says_which_dates_the_data_covers() -> None:
    covers = "The data covers 2024-11-01 to 2026-10-31 (orders.order_date)."
    empty = Answer(**{**answer("SELECT 1", []).__dict__, "coverage": covers})
    lines = outcome_text(Outcome(kind="answer", answer=empty)).splitlines()
    assert lines[3:5] == ["0 rows", covers] and lines[5].startswith("Sources: ")
    one_null = Answer(**{**answer("SELECT 1", [[None]]).__dict__, "coverage": covers})
    assert outcome_text(Outcome(kind="answer", answer=one_null)).splitlines()[:3] == [
        "C0: NULL",
        covers,
        "",
    ]
