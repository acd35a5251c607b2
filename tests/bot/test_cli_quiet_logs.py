"""`querybot ask` without -v shows the person what they need and no library or set-up noise:
no DEBUG line from bm25s when an index of examples is built, and a scripted model that runs out
of replies gives its one friendly message with no WARNING before it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.memory.examples import ExampleStore
from tests.support.cli_process import demo_env, run_querybot

SQL = (
    "SELECT r.region_name, SUM(s.net_revenue) AS revenue FROM sales AS s "
    "JOIN regions AS r USING (region_id) GROUP BY 1"
)


@pytest.mark.slow
def test_an_exhausted_script_and_an_example_index_log_nothing_by_default(tmp_path: Path) -> None:
    # an approved example, so answering the question builds a BM25 index over the examples
    store = ExampleStore(tmp_path / "data" / "examples.sqlite")
    tables = ["demo.main.sales", "demo.main.regions"]
    store.add("revenue by region?", SQL, tables=tables, columns=[], approved_by="U1")
    store.close()
    script = tmp_path / "empty.jsonl"
    script.write_text("")  # no reply at all: the first model call finds the script exhausted
    env = demo_env(tmp_path / "data", QUERYBOT_MODEL=f"scripted:{script}")
    done = run_querybot(["ask", "--yes", "revenue by region, please?"], cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    assert "ran out of replies: its script has 0 replies" in done.stdout
    assert "bm25s" not in done.stderr
    assert " DEBUG " not in done.stderr and " WARNING " not in done.stderr
    assert "ScriptExhausted" not in done.stderr
    # what is left is the thread's id to continue with
    (said,) = [line for line in done.stderr.splitlines() if line.strip()]
    assert said.startswith("(thread cli:")
