"""Issue 17 item 3 in the terminal: `querybot ask` prints the proposal's SQL as the gate wrote
it, one clause a line (the demo warehouse, a scripted model); the answer refers to it rather
than printing it again (item 4)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.terminal import APPROVED_ABOVE

pytestmark = pytest.mark.slow

#: A WITH query with a join and GROUP BY, on one line as a model writes it.
SQL = (
    "WITH by_region AS (SELECT region_id, SUM(net_revenue) AS revenue FROM sales "
    "GROUP BY region_id) SELECT r.region_name, b.revenue FROM by_region AS b "
    "JOIN regions AS r ON r.region_id = b.region_id ORDER BY b.revenue DESC"
)

PRETTY = """WITH by_region AS (
  SELECT
    region_id,
    SUM(net_revenue) AS revenue
  FROM demo.main.sales
  GROUP BY
    region_id
)
SELECT
  r.region_name,
  b.revenue
FROM by_region AS b
JOIN demo.main.regions AS r
  ON r.region_id = b.region_id
ORDER BY
  b.revenue DESC
LIMIT 1000"""


def test_the_proposal_and_the_answer_print_the_sql_one_clause_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"kind": "sql", "explanation": "Revenue by region", "sql": SQL}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["ask", "revenue by region?"]) == 0
    out = capsys.readouterr().out
    # as proposed, unflattened; the answer after the approval refers to it
    assert out.count("\n" + PRETTY + "\n") == 1, out
    assert out.index(PRETTY) < out.index("Sources: ") < out.index(APPROVED_ABOVE)
    assert "Revenue by region" in out
