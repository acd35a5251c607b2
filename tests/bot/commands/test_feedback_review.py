"""`querybot feedback`: the open thumbs down in the bot's store (SQLite in the data directory),
newest first, each with when, who, the warehouse, the question, the hash of its SQL and what
was wrong; a thumbs down taken back is not listed; `--warehouse`, `--limit`, `--sql` and
`--json` narrow or widen it; where the bot never ran, it says so and creates nothing; its help
loads no database, model or warehouse library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.memory.audit import sql_sha256
from bot.cli import main
from bot.commands.feedback import when
from bot.store.feedback import DOWN, UP, Rating
from bot.store.sqlite import SqliteStore

SALES_SQL = "SELECT\n  COUNT(*) AS orders\nFROM demo.main.orders"
FINANCE_SQL = "SELECT SUM(amount) AS revenue FROM ledger"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bot's data directory, as `querybot feedback` finds it (QUERYBOT_DATA_DIR)."""
    for name in ("QUERYBOT_STATE_URL", "QUERYBOT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def rated(data_dir: Path, *ratings: Rating) -> list[Rating]:
    """Keep `ratings` in the bot's store, one after the other, as the Slack listeners do; the
    thumbs down it then holds for review, newest first (with their times)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(data_dir / "state.sqlite")
    try:
        for rating in ratings:
            store.feedback.rate(rating)
        return store.feedback.to_review()
    finally:
        store.close()


def down(pid: str, user: str, reason: str, *, warehouse: str = "sales") -> Rating:
    sql = FINANCE_SQL if warehouse == "finance" else SALES_SQL
    return Rating(pid, user, warehouse, DOWN, reason, f"question {pid}?", sql)


def up(pid: str, user: str, *, warehouse: str = "sales") -> Rating:
    return Rating(pid, user, warehouse, UP, "", f"question {pid}?", SALES_SQL)


def test_lists_the_open_thumbs_down_newest_first_with_what_a_reviewer_needs(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = rated(
        data_dir,
        down("p1", "U0ALICE01", "it counts cancelled\norders too"),
        up("p1", "U0BOB0001"),  # another person liked it: not a report
        down("p2", "U0BOB0001", "wrong year", warehouse="finance"),
        down("p3", "U0CARA001", "took it back"),
        up("p3", "U0CARA001"),  # a change of mind replaces the thumbs down
    )
    assert [r.proposal_id for r in kept] == ["p2", "p1"]
    assert main(["feedback"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 thumbs down to review, newest first:")
    finance, sales = out.split("\n\n")[1:]
    assert finance.splitlines() == [
        f"{when(kept[0].rated_at)}  U0BOB0001  finance  sql {sql_sha256(FINANCE_SQL)[:12]}"
        "  proposal p2",
        "    Asked: question p2?",
        "    Wrong: wrong year",
    ]
    assert sales.splitlines()[0].split("  ")[1:] == [
        "U0ALICE01",
        "sales",
        f"sql {sql_sha256(SALES_SQL)[:12]}",
        "proposal p1",
    ]
    assert "    Wrong: it counts cancelled orders too" in sales, "a reason on one line"
    assert "took it back" not in out and "p3" not in out
    assert "SELECT" not in out, "the SQL only with --sql"


def test_warehouse_limit_and_sql_narrow_or_widen_the_list(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rated(
        data_dir,
        down("p1", "U0ALICE01", "first"),
        down("p2", "U0BOB0001", "second", warehouse="finance"),
        down("p3", "U0CARA001", "third"),
    )
    assert main(["feedback", "--warehouse", "sales", "--sql"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 thumbs down to review")
    assert out.index("Wrong: third") < out.index("Wrong: first") and "second" not in out
    assert "      SELECT\n        COUNT(*) AS orders\n      FROM demo.main.orders" in out
    assert main(["feedback", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 thumbs down to review") and "Wrong: third" in out
    assert main(["feedback", "--warehouse", "marketing"]) == 0
    assert capsys.readouterr().out == "No thumbs down to review on marketing.\n"
    with pytest.raises(SystemExit) as refused:
        main(["feedback", "--limit", "0"])
    assert refused.value.code == 2
    assert "'0' is not a whole number above 0" in capsys.readouterr().err


def test_json_writes_one_report_a_line_with_the_whole_sql_and_hash(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [kept] = rated(data_dir, down("p1", "U0ALICE01", "it counts cancelled orders too"))
    assert main(["feedback", "--json"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line) == {
        "rated_at": when(kept.rated_at),
        "user": "U0ALICE01",
        "warehouse": "sales",
        "proposal_id": "p1",
        "question": "question p1?",
        "sql_sha256": sql_sha256(SALES_SQL),
        "reason": "it counts cancelled orders too",
        "sql": SALES_SQL,
    }


def test_where_the_bot_never_ran_it_says_so_and_creates_nothing(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["feedback"]) == 0
    assert capsys.readouterr().out.startswith("No feedback yet: the bot has not run with ")
    assert not data_dir.exists()
    assert main(["feedback", "--json"]) == 0
    said = capsys.readouterr()
    assert said.out == "" and "No feedback yet" in said.err, "the JSON lines stay JSON"
    rated(data_dir)  # the bot ran, nobody rated anything
    assert main(["feedback"]) == 0
    assert capsys.readouterr().out == "No thumbs down to review.\n"


def test_its_help_imports_no_database_model_or_warehouse_library(tmp_path: Path) -> None:
    heavy = ("psycopg", "langchain_core", "langgraph", "duckdb")
    runner = (
        "import sys\n"
        "from bot.cli import main\n"
        "try:\n    main(['feedback', '--help'])\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", runner], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "--warehouse" in done.stdout and "--json" in done.stdout
    assert done.stdout.splitlines()[-1] == "[]"
