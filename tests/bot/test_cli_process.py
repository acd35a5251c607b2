"""`querybot` as a person runs it, in its own process: help without the heavy imports, a closed
standard input at the y/N prompt, an unknown `--thread`, and quiet logs unless `-v`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from tests.support.cli_process import demo_env, run_querybot

SQL = (
    "SELECT r.region_name, SUM(s.net_revenue) AS revenue FROM sales AS s "
    "JOIN regions AS r USING (region_id) GROUP BY 1 ORDER BY 2 DESC"
)
REPLY = json.dumps({"kind": "sql", "explanation": "Revenue by region", "sql": SQL})
#: What `--help` must not import: the model and graph libraries and the warehouse engine.
HEAVY = ("langchain", "langchain_core", "langgraph", "duckdb")
HELP_RUNNER = """
import json, sys
from bot.cli import main
for argv in json.loads(sys.argv[1]):
    try:
        main(argv)
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[2]))))
"""


def querybot(
    *argv: str, cwd: Path, replies: int = 1, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    """`querybot ARGV` in a new process on the demo warehouse, with `replies` scripted replies."""
    script = cwd / "script.jsonl"
    script.write_text("\n".join([REPLY] * replies) + "\n")
    env = demo_env(cwd / "data", QUERYBOT_MODEL=f"scripted:{script}")
    return run_querybot(list(argv), cwd=cwd, env=env, stdin=stdin)


def test_help_imports_no_model_graph_or_warehouse_library(tmp_path: Path) -> None:
    helps = [["--help"], *([c, "--help"] for c in ("run", "ask", "chat", "doctor", "eval", "gate"))]
    done = subprocess.run(
        [sys.executable, "-c", HELP_RUNNER, json.dumps(helps), json.dumps(HEAVY)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--thread" in done.stdout and "--export-examples" in done.stdout  # ask's, eval's
    assert "--dialect" in done.stdout  # gate's own help
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.slow
def test_a_closed_stdin_at_the_prompt_runs_nothing_and_says_so(tmp_path: Path) -> None:
    done = querybot("ask", "revenue by region?", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Run this query? [y/N]" in done.stdout
    assert "Rejected by" in done.stdout and "Sources:" not in done.stdout
    assert "Traceback" not in done.stderr and "EOFError" not in done.stderr
    (said,) = [line for line in done.stderr.splitlines() if "standard input" in line]
    assert "not run" in said and "--yes" in said
    assert " INFO " not in done.stderr, "logs stay at WARNING unless -v"


@pytest.mark.slow
def test_verbose_logs_info(tmp_path: Path) -> None:
    done = querybot("-v", "ask", "--yes", "revenue by region?", cwd=tmp_path)  # `ask -v` too
    assert done.returncode == 0, done.stderr
    assert "Sources: demo.main.sales" in done.stdout
    assert " INFO bot.wiring: Agent 'main' over duckdb ready" in done.stderr


@pytest.mark.slow
def test_an_unknown_thread_is_an_error_and_a_known_one_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = querybot("ask", "--yes", "revenue by region?", cwd=tmp_path, replies=2)
    assert first.returncode == 0, first.stderr
    said = re.search(r"continue with --thread (cli:[0-9a-f]+)", first.stderr)
    assert said, first.stderr
    thread = said.group(1)
    again = querybot("ask", "--yes", "--thread", thread, "and again?", cwd=tmp_path, replies=2)
    assert again.returncode == 0, again.stderr
    assert "Sources: demo.main.sales" in again.stdout

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{tmp_path / 'script.jsonl'}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QUERYBOT_CONFIG", raising=False)
    assert main(["ask", "--yes", "--thread", "cli:nosuch", "revenue by region?"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (said,) = captured.err.strip().splitlines()
    assert "cli:nosuch" in said and "leave out --thread" in said
