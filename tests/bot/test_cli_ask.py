"""`querybot ask`: the same graph in a terminal, on the demo warehouse, approving with y/n."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.cli import main
from connectors.duckdb.connector import DuckDBConnector

pytestmark = pytest.mark.slow

SQL = (
    "SELECT r.region_name, SUM(s.net_revenue) AS revenue FROM sales AS s "
    "JOIN regions AS r USING (region_id) GROUP BY 1 ORDER BY 2 DESC"
)


@pytest.fixture
def terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"kind": "sql", "explanation": "Revenue by region", "sql": SQL}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_ask_yes_prints_the_result_and_its_sources(
    terminal: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["ask", "revenue by region?"]) == 0
    out = capsys.readouterr().out
    # the agent's own hardened connection is open in this process: use one like it
    warehouse = DuckDBConnector(terminal / "data" / "demo.duckdb")
    top, revenue = warehouse.run(SQL, max_rows=1, timeout_s=10).rows[0]
    warehouse.close()
    assert f"{top}  " in out and f"{revenue:,.2f}" in out
    assert "Sources: demo.main.sales, demo.main.regions · duckdb · 5 rows" in out


def test_ask_no_runs_nothing(
    terminal: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["ask", "revenue by region?"]) == 0
    out = capsys.readouterr().out
    assert "Rejected by" in out and "Sources:" not in out


def test_pasted_sql_the_gate_refuses_prints_the_reasons_and_no_model_query(
    terminal: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["ask", "SELECT * FROM ordrs"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("I did not propose the SQL you sent: the checks refused it.\n")
    assert "• Unknown table 'ordrs'" in out and "(did you mean orders?)" in out
    assert "Fix the SQL and send it again, or ask your question in words" in out
    assert "Revenue by region" not in out and "Run this query?" not in out


def test_pasted_sql_is_proposed_with_the_gates_changes(
    terminal: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["ask", "```sql\nSELECT region_name FROM regions;\n```"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "The SQL you pasted, checked and ready to run. The checks changed it: removed trailing "
        "semicolon; row cap added (LIMIT 1000).\n"
    )
    assert "Revenue by region" not in out and "Rejected by" in out
