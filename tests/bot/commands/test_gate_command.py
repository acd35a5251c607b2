"""`querybot gate`: one statement judged against the configured warehouse (the demo DuckDB by
default, a SQLite file, a warehouse of QUERYBOT_CONFIG) or offline against a schema file; the
verdict as JSON on stdout, a refusal quoted from the author's own text on stderr; exit 0
accepted, 1 refused, 2 usage error, 3 nothing checked. Through `bot.cli.main`, and once as the
installed `querybot` in its own process."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

from bot.cli import main
from connectors.demo.build import ensure_demo
from tests.support.sql_text import one_line


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def verdict(self) -> dict[str, object]:
        parsed = json.loads(self.out)
        assert isinstance(parsed, dict)
        return parsed


class Gate(Protocol):
    def __call__(self, sql: str, *argv: str) -> Run: ...


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding the demo warehouse, built once for the module."""
    data = tmp_path_factory.mktemp("data")
    ensure_demo(data)
    return data


@pytest.fixture
def gate(
    tmp_path: Path,
    demo_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Gate:
    """`querybot gate ARGV` with `sql` on standard input, in a deployment with no settings
    but its data directory: the default warehouse is the demo."""
    monkeypatch.chdir(tmp_path)  # no .env of the checkout is read
    for name in ("QUERYBOT_CONFIG", "QUERYBOT_WAREHOUSE", "QUERYBOT_ROW_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("QUERYBOT_ALLOWED_FUNCTIONS", raising=False)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(demo_dir))

    def run(sql: str, *argv: str) -> Run:
        monkeypatch.setattr("sys.stdin", io.StringIO(sql))
        try:
            code = main(["gate", *argv])
        except SystemExit as stop:  # argparse's usage errors
            code = int(stop.code or 0)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A SQLite file warehouse with one table."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
    return path


@pytest.mark.slow
def test_the_demo_warehouse_is_the_default_and_its_tables_are_checked(gate: Gate) -> None:
    accepted = gate("SELECT region_name FROM regions;\n")
    assert accepted.code == 0, accepted.err
    assert one_line(str(accepted.verdict["sql"])) == (
        "SELECT region_name FROM demo.main.regions LIMIT 1000"
    )
    assert accepted.verdict["columns"] == ["demo.main.regions.region_name"]
    assert accepted.err == ""

    refused = gate("SELECT *\nFROM nosuch")
    assert refused.code == 1
    assert refused.verdict["codes"] == ["unknown_table"]
    assert refused.verdict["locations"] == [{"line": 2, "column": 6, "text": "nosuch"}]
    assert "line 2, column 6: Unknown table 'nosuch'" in refused.err
    assert "    2 | FROM nosuch\n" + " " * 13 + "^^^^^^\n" in refused.err


def test_a_typo_is_quoted_as_typed_never_as_sqlglot_rewrote_it(gate: Gate) -> None:
    refused = gate("SELEC * FRM orders\n")
    assert refused.code == 1
    assert refused.verdict["codes"] == ["not_a_query"]
    assert refused.verdict["reasons"] == [
        "'SELEC * FRM orders' is not a query; send one SELECT (or WITH ... SELECT)"
    ]
    assert refused.verdict["sql"] == "SELEC * FRM orders"
    assert refused.verdict["locations"] == [{"line": 1, "column": 1, "text": "SELEC * FRM orders"}]
    assert "AS orders" not in refused.out + refused.err  # sqlglot reads it as `... AS orders`
    assert "1 | SELEC * FRM orders\n" in refused.err


@pytest.mark.parametrize(
    ("sql", "code", "line", "column", "text"),
    [
        ("SELECT *\n  FROM orders WHERE", "parse_error", 2, 15, "WHERE"),
        ("-- by region\nSELECT region_nme\nFROM regions", "unknown_column", 2, 8, "region_nme"),
        ("SELECT 1 FROM ordres", "unknown_table", 1, 15, "ordres"),
        ("\n\nDELETE FROM orders", "write", 3, 1, "DELETE FROM orders"),
        (
            "SELECT order_id,\n       current_setting( 'threads' )\nFROM orders",
            "denied_function",
            2,
            8,
            "current_setting( 'threads' )",
        ),
        ("```sql\nSELECT 1 FROM information_schema.tables\n```", "system_catalog", 2, 15,
         "information_schema.tables"),
    ],
)  # fmt: skip
def test_every_refusal_points_at_the_authors_own_text(
    gate: Gate, sql: str, code: str, line: int, column: int, text: str
) -> None:
    refused = gate(sql)
    assert refused.code == 1
    assert refused.verdict["codes"] == [code]
    assert refused.verdict["locations"] == [{"line": line, "column": column, "text": text}]
    assert sql.splitlines()[line - 1][column - 1 :].startswith(text)
    assert str(refused.verdict["sql"]) in sql  # the statement shown is the author's
    assert f"line {line}, column {column}: " in refused.err
    assert f"{line} | {sql.splitlines()[line - 1]}\n" in refused.err


def test_a_modelled_call_is_quoted_as_written(gate: Gate) -> None:
    """sqlglot reads `Version ( )` as its CurrentVersion, written back as VERSION()."""
    refused = gate("SELECT Version ( )")
    (reason,) = refused.verdict["reasons"]
    assert str(reason).startswith("Version ( ) reveals ")
    assert refused.verdict["locations"] == [{"line": 1, "column": 8, "text": "Version ( )"}]


@pytest.mark.parametrize("sql", ["", "  \n\n"])
def test_empty_input_is_refused_and_says_where_it_was_read(gate: Gate, sql: str) -> None:
    refused = gate(sql)
    assert refused.code == 1
    assert refused.verdict["codes"] == ["empty"] and refused.verdict["sql"] == ""
    assert refused.verdict["locations"] == [None]
    assert "standard input holds no SQL" in refused.err


def test_a_sqlite_file_warehouse_and_its_dialect(
    gate: Gate, shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", f"sqlite:///{shop}")
    monkeypatch.setenv("QUERYBOT_ROW_LIMIT", "50")
    accepted = gate("SELECT name FROM customers WHERE city = 'Oslo'")
    assert accepted.code == 0, accepted.err
    assert one_line(str(accepted.verdict["sql"])) == (
        "SELECT name FROM main.customers WHERE city = 'Oslo' LIMIT 50"
    )
    refused = gate("SELECT nme FROM customers", "--dialect", "sqlite")
    assert refused.code == 1
    assert refused.verdict["codes"] == ["unknown_column"]
    assert "did you mean name?" in str(refused.verdict["reasons"])
    assert refused.verdict["locations"] == [{"line": 1, "column": 8, "text": "nme"}]
    # the demo's tables are not this warehouse's
    assert gate("SELECT region_name FROM regions").verdict["codes"] == ["unknown_table"]
    other = gate("SELECT name FROM customers", "--dialect", "postgres")
    assert other.code == 2 and other.out == ""
    assert "--dialect postgres is not the dialect of the sqlite warehouse, sqlite" in other.err


def test_a_named_warehouse_of_the_config_file(
    gate: Gate, shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "querybot.toml"
    config.write_text(
        'default = "shop"\n[warehouses.shop]\nspec = "demo"\n'
        f'[warehouses.files]\nspec = "sqlite:///{shop}"\nrow_limit = 5\n'
    )
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    assert gate("SELECT region_name FROM regions").code == 0  # the default: the demo
    files = gate("SELECT name FROM customers", "--warehouse", "files")
    assert files.code == 0, files.err
    assert one_line(str(files.verdict["sql"])) == "SELECT name FROM main.customers LIMIT 5"
    assert gate("SELECT region_name FROM regions", "--warehouse", "files").code == 1
    unknown = gate("SELECT 1", "--warehouse", "nosuch")
    assert unknown.code == 2
    assert "no warehouse named 'nosuch'" in unknown.err and "shop, files" in unknown.err


def test_an_unreadable_warehouse_checks_nothing(
    gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "missing.db"
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", f"sqlite:///{missing}")
    unreadable = gate("SELEC * FRM orders")
    assert unreadable.code == 3 and unreadable.out == ""
    assert unreadable.err.startswith("Nothing was checked: ")
    assert f"{missing} does not exist" in unreadable.err

    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", f"sqlite:///{empty}")
    no_tables = gate("SELECT * FROM anything")
    assert no_tables.code == 3 and no_tables.out == ""
    assert "has no tables querybot may read" in no_tables.err and "--schema" in no_tables.err


def test_a_schema_file_is_checked_offline(
    gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", f"sqlite:///{tmp_path / 'missing.db'}")  # unused
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"shop": {"main": {"sales": {"region": "TEXT", "n": "INT"}}}}))
    accepted = gate("SELECT region FROM sales;\n", "--dialect", "duckdb", "--schema", str(schema))
    assert accepted.code == 0, accepted.err
    assert accepted.verdict["sql"] == "SELECT\n  region\nFROM shop.main.sales\nLIMIT 1000"
    assert accepted.verdict["tables"] == ["shop.main.sales"]
    refused = gate("SELECT regoin FROM sales", "--dialect", "sqlite", "--schema", str(schema))
    assert refused.code == 1 and refused.verdict["codes"] == ["unknown_column"]
    assert "did you mean region?" in str(refused.verdict["reasons"])
    unknown = gate("SELECT * FROM anything", "--dialect", "postgres", "--schema", str(schema))
    assert unknown.code == 1 and unknown.verdict["codes"] == ["unknown_table"]


def test_looker_and_mariadb_are_dialects(gate: Gate, tmp_path: Path) -> None:
    looker = tmp_path / "looker.json"
    looker.write_text(json.dumps({"shop": {"orders": {"orders.status": "STRING"}}}))
    args = ("--dialect", "looker", "--schema", str(looker))
    accepted = gate("SELECT `orders.status` FROM `shop`.`orders`", *args)
    assert accepted.code == 0, accepted.err
    refused = gate("SELECT orders.status FROM shop.orders", *args)
    assert refused.code == 1 and set(refused.verdict["codes"]) == {"looker_backticks"}

    mariadb = tmp_path / "mariadb.json"
    mariadb.write_text(json.dumps({"t": {"a": "INT", "j": "JSON"}}))
    args = ("--dialect", "mariadb", "--schema", str(mariadb))
    written = gate("SELECT a FROM t WHERE a RLIKE 'x' AND j->>'$.p' = 'y'", *args)
    assert written.code == 0, written.err
    assert one_line(str(written.verdict["sql"])) == (
        "SELECT a FROM t WHERE a REGEXP 'x' AND JSON_UNQUOTE(JSON_EXTRACT(j, '$.p')) = 'y' "
        "LIMIT 1000"
    )
    # read as MySQL, so MySQL's rules hold: the body of /*! ... */ would run
    hidden = gate("SELECT a FROM t /*! WHERE SLEEP(10) */", *args)
    assert hidden.code == 1 and hidden.verdict["codes"] == ["executable_comment"]


def test_row_limit_option(gate: Gate) -> None:
    capped = gate("SELECT order_id FROM orders", "--row-limit", "5").verdict["sql"]
    assert one_line(str(capped)) == "SELECT order_id FROM demo.main.orders LIMIT 5"
    uncapped = gate("SELECT order_id FROM orders", "--row-limit", "0").verdict["sql"]
    assert one_line(str(uncapped)) == "SELECT order_id FROM demo.main.orders"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--dialect", "oracle"], "invalid choice: 'oracle'"),
        (["--row-limit", "-1"], "--row-limit must be 0"),
        (["--schema", "s.json"], "add --dialect"),
        (["--schema", "s.json", "--dialect", "duckdb", "--warehouse", "x"], "out --warehouse"),
        (["--schema", "bad.json", "--dialect", "duckdb"], "cannot use --schema bad.json"),
        (["--schema", "list.json", "--dialect", "duckdb"], "should be a JSON object"),
        (["--schema", "none.json", "--dialect", "duckdb"], "names no tables"),
        (["missing.sql"], "cannot read the SQL file missing.sql"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2(gate: Gate, tmp_path: Path, argv: list[str], said: str) -> None:
    (tmp_path / "s.json").write_text('{"t": {"a": "INT"}}')
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[]")
    (tmp_path / "none.json").write_text("{}")
    done = gate("SELECT 1", *argv)
    assert done.code == 2 and done.out == ""
    assert said in done.err


@pytest.mark.slow
def test_the_installed_command_reads_a_file(demo_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "typo.sql").write_text("-- revenue\nSELECT region_name\nFRM regions;\n")
    (tmp_path / "good.sql").write_text("SELECT region_name FROM regions;\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUERYBOT_")}
    env["QUERYBOT_DATA_DIR"] = str(demo_dir)
    querybot = str(Path(sys.executable).with_name("querybot"))

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [querybot, "gate", *argv],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )

    typo = run("typo.sql")
    assert typo.returncode == 1, typo.stderr
    verdict = json.loads(typo.stdout)
    assert verdict["codes"] == ["parse_error"]
    assert verdict["locations"] == [{"line": 3, "column": 5, "text": "regions"}]
    assert "The gate refused the statement in typo.sql" in typo.stderr
    assert "3 | FRM regions;" in typo.stderr and "Traceback" not in typo.stderr
    good = run("good.sql")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["tables"] == ["demo.main.regions"]
