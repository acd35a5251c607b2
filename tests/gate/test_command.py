"""`querybot gate`: SQL on standard input, the verdict as JSON, exit 0 accepted / 1 rejected."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agent.gate.command import main
from tests.sql_text import one_line


def run(sql: str, *argv: str) -> tuple[int, dict[str, object]]:
    out = io.StringIO()
    code = main(list(argv), stdin=io.StringIO(sql), stdout=out)
    return code, json.loads(out.getvalue())


def test_accepted_statement_exits_0(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"shop": {"main": {"sales": {"region": "TEXT", "n": "INT"}}}}))
    code, verdict = run(
        "SELECT region FROM sales;\n", "--dialect", "duckdb", "--schema", str(schema)
    )
    assert code == 0
    assert verdict["ok"] is True and verdict["reasons"] == []
    assert verdict["sql"] == "SELECT\n  region\nFROM shop.main.sales\nLIMIT 1000"
    assert verdict["tables"] == ["shop.main.sales"]


def test_rejected_statement_exits_1_with_reasons(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"sales": {"region": "TEXT"}}))
    code, verdict = run("SELECT regoin FROM sales", "--dialect", "sqlite", "--schema", str(schema))
    assert code == 1 and verdict["ok"] is False
    assert verdict["codes"] == ["unknown_column"]
    assert "did you mean region?" in verdict["reasons"][0]


def test_without_schema_only_safety_is_checked() -> None:
    assert run("SELECT * FROM anything", "--dialect", "postgres")[0] == 0
    code, verdict = run("DROP TABLE anything", "--dialect", "postgres")
    assert code == 1 and verdict["codes"] == ["ddl"]


def test_row_limit_option() -> None:
    capped = run("SELECT a FROM t", "--dialect", "mysql", "--row-limit", "5")[1]["sql"]
    assert one_line(capped) == "SELECT a FROM t LIMIT 5"
    uncapped = run("SELECT a FROM t", "--dialect", "mysql", "--row-limit", "0")[1]["sql"]
    assert one_line(uncapped) == "SELECT a FROM t"


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--dialect", "oracle"], stdin=io.StringIO("SELECT 1"), stdout=io.StringIO())
    assert exit_info.value.code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit):
        main(["--dialect", "duckdb", "--schema", str(bad)], stdin=io.StringIO(""))
    assert "cannot use --schema" in capsys.readouterr().err
