"""`querybot chat` as a person runs it, in its own process on a terminal (a pty): a question,
an edit at the prompt, approval, a numbered follow-up in the same thread, `/csv`, history,
`/quit`; demo mode and pasted SQL with no model key at all; the no-key message."""

from __future__ import annotations

import csv
import fcntl
import json
import os
import pty
import re
import select
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from bot.cli import main
from bot.settings import NO_KEY_ROUTES
from tests.support.cli_process import CODE, demo_env
from tests.support.demo_day import TODAY

pytestmark = pytest.mark.slow

REVENUE = (
    "SELECT r.region_name, SUM(s.net_revenue) AS revenue FROM sales AS s "
    "JOIN regions AS r USING (region_id) GROUP BY 1 ORDER BY 2 DESC"
)
MONTHLY = (
    "SELECT date_trunc('month', s.order_date) AS month, r.region_name, "
    "SUM(s.net_revenue) AS revenue FROM sales AS s JOIN regions AS r USING (region_id) "
    "GROUP BY 1, 2 ORDER BY 1, 2"
)
#: The edit typed at the first proposal: the same revenue, by region name.
EDITED = REVENUE.replace("ORDER BY 2 DESC", "ORDER BY 1")
#: Seconds any one expected output may take (a guard against a hung process, not a timing).
PATIENCE = 120
#: The model's variables, none of which a keyless run may see.
MODEL_VARIABLES = ("GOOGLE_API_KEY", "QUERYBOT_MODEL", "QUERYBOT_CHECK_MODEL", "QUERYBOT_CONFIG")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data directory for the module: the demo warehouse is built once."""
    return tmp_path_factory.mktemp("chat-data")


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty, so Ctrl-C
    typed there interrupts it as in a real terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """`querybot ARGV` on a pty: what it printed so far, and lines typed at its prompts."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.fd, child = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-c", CODE, *argv],
            stdin=child,
            stdout=child,
            stderr=child,
            cwd=cwd,
            env=env,
            close_fds=True,
            preexec_fn=_own_terminal,
        )
        os.close(child)
        self.output = ""

    def expect(self, text: str) -> str:
        """Read until `text` has been printed; return everything printed before it since the
        last expect."""
        while text not in self.output:
            ready, _, _ = select.select([self.fd], [], [], PATIENCE)
            try:
                chunk = os.read(self.fd, 65536).decode(errors="replace") if ready else ""
            except OSError:  # the process ended and closed the pty
                chunk = ""
            if not chunk:
                self.process.kill()
                pytest.fail(f"no {text!r} (ended or hung); printed:\n{self.output}")
            self.output += chunk.replace("\r\n", "\n")
        before, _, self.output = self.output.partition(text)
        return before

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def close(self) -> tuple[int, str]:
        """Wait for the process to end; its exit code and what it printed last."""
        code = self.process.wait(timeout=PATIENCE)
        rest = self.output
        try:
            while chunk := os.read(self.fd, 65536):
                rest += chunk.decode(errors="replace").replace("\r\n", "\n")
        except OSError:
            pass
        os.close(self.fd)
        return code, rest


def environment(data_dir: Path, **settings: str) -> dict[str, str]:
    return demo_env(data_dir, leave_out=MODEL_VARIABLES, **settings)


def test_a_session_edits_approves_follows_up_saves_csv_and_quits(
    tmp_path: Path, data_dir: Path
) -> None:
    script = tmp_path / "script.jsonl"
    replies = [("Revenue by region", REVENUE), ("Revenue by month and region", MONTHLY)]
    script.write_text(
        "".join(json.dumps({"kind": "sql", "explanation": e, "sql": s}) + "\n" for e, s in replies)
    )
    seen = tmp_path / "script.seen.jsonl"
    seen.touch()  # the scripted model appends the messages of every call here
    # the suite's pinned day: two years of months (24 of them, five regions: 120 rows) whatever
    # the real date
    env = environment(data_dir, QUERYBOT_MODEL=f"scripted:{script}", QUERYBOT_TODAY=str(TODAY))
    chat = Terminal(["chat"], env, tmp_path)
    chat.expect("querybot> ")
    chat.type("/csv early.csv")
    assert "There is no result to save yet: ask a question first." in chat.expect("querybot> ")
    chat.type("revenue by region?")
    assert "Revenue by region" in chat.expect("[y]es / [n]o / [e]dit: ")
    chat.type("e")
    chat.expect("sql> ")
    chat.type(EDITED)
    chat.type("")  # the empty line ends the SQL
    shown = chat.expect("[y]es / [n]o / [e]dit: ")
    assert "ORDER BY\n  r.region_name" in shown or "ORDER BY\n  1" in shown, shown
    chat.type("y")
    answer = chat.expect("querybot> ")
    assert answer.index("Asia Pacific") < answer.index("North America"), "the edit ran"
    follow_ups = re.findall(r"^  (\d)\. (.+)$", answer, re.MULTILINE)
    number = next(n for n, q in follow_ups if q == "Show this by month")

    chat.type(number)
    assert "Revenue by month and region" in chat.expect("[y]es / [n]o / [e]dit: ")
    chat.type("y")
    answer = chat.expect("querybot> ")
    assert "120 rows (first 20 shown)" in answer
    chat.type(f"/csv {tmp_path / 'no-such-folder' / 'months.csv'}")
    assert "Nothing was saved." in chat.expect("querybot> ")
    out = tmp_path / "months.csv"
    chat.type(f"/csv {out}")
    assert "Wrote 120 rows to" in chat.expect("querybot> ")
    chat.type("/quit")
    code, rest = chat.close()

    assert code == 0, rest
    assert "Traceback" not in chat.output + rest
    with out.open(newline="") as saved:
        rows = list(csv.reader(saved))
    assert rows[0] == ["month", "region_name", "revenue"] and len(rows) == 121
    calls = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(calls) == 2, "the edit and the follow-up's number needed no other model call"
    history = " ".join(
        m["content"] for m in calls[1] if "Earlier in this conversation" in m["content"]
    )
    assert "Q: revenue by region?" in history, "the follow-up was asked in the same thread"
    assert "revenue by region?" in (data_dir / "chat_history").read_text()


def test_demo_mode_answers_a_sample_question_with_no_key(tmp_path: Path, data_dir: Path) -> None:
    chat = Terminal(["chat", "--demo"], environment(data_dir), tmp_path)
    opening = chat.expect("querybot> ")
    assert "demo mode: recorded model replies, no model is called" in opening
    samples = dict(re.findall(r"^  (\d)\. (.+)$", opening, re.MULTILINE))
    number = next(n for n, q in samples.items() if q == "How many customers do we have?")
    chat.type(number)
    chat.expect("[y]es / [n]o / [e]dit: ")
    chat.type("y")
    answer = chat.expect("querybot> ")
    assert "Customers: 2,000" in answer
    assert "Break this down by segment" in answer
    chat.type("which customers returned the most items?")
    unknown = chat.expect("querybot> ")
    assert "Demo mode has no recorded reply" in unknown
    assert "- How many customers do we have?" in unknown
    os.write(chat.fd, b"\x04")  # Ctrl-D
    code, rest = chat.close()
    assert code == 0, rest
    assert "Traceback" not in chat.output + rest


def test_with_no_key_pasted_sql_runs_a_question_names_demo_mode_and_ctrl_c_ends(
    tmp_path: Path, data_dir: Path
) -> None:
    chat = Terminal(["chat"], environment(data_dir), tmp_path)
    chat.expect("querybot> ")
    chat.type("SELECT count(*) AS customers FROM customers WHERE segment = 'business'")
    chat.expect("[y]es / [n]o / [e]dit: ")
    chat.type("y")
    assert re.search(r"Customers: \d", chat.expect("querybot> "))
    chat.type("how many customers do we have?")
    refused = chat.expect("querybot> ")
    assert "GOOGLE_API_KEY is not set" in refused and "querybot chat --demo" in refused
    assert "openai:" in refused and "docs/terminal.md" in refused
    # Ctrl-C at the prompt ends the session, though the query left threads that may take the
    # signal (without bot.commands.interrupts, about half such sessions hung in input())
    os.write(chat.fd, b"\x03")
    chat.expect("(thread ")
    code, rest = chat.close()
    assert code == 0, rest
    assert "Traceback" not in chat.output + rest


def test_ask_and_run_without_a_key_point_to_demo_mode(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(data_dir)
    for name in (*MODEL_VARIABLES, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(data_dir))
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    assert main(["ask", "--yes", "revenue by region?"]) == 2
    err = capsys.readouterr().err
    assert "GOOGLE_API_KEY is not set" in err and NO_KEY_ROUTES in err
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "SLACK_BOT_TOKEN" in err and "GOOGLE_API_KEY" in err
    assert "querybot chat --demo" in err and "docs/terminal.md" in err
