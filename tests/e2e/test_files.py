"""End to end with files: the real `querybot run --http` process, a scripted model and the Web
API stand-in, which serves the files people share (`url_private_download`, `files.info`).

A CSV dropped into a mention is downloaded with the bot token, loaded into the thread's DuckDB
sandbox and answered from it through the usual proposal and approval; an unreadable file gets a
clear message; the sandbox answers again after a restart; an idle sweep removes it, and a later
question in the thread is told to upload the file again.

One bot process with a 10 KB file limit serves the module (shared_bot.py), each test's model
replies listed for it in REPLIES; the restart and the sweep start processes of their own on its
data directory. Each test has threads of its own, so any test passes alone or in any order.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bot.blocks import APPROVE_ACTION, cell_text
from connectors.sandbox.sandboxes import Sandboxes
from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import Thread, has_text
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import BOT_USER_ID, TEAM_ID, Posted, SlackStandin

FILES = Path(__file__).resolve().parents[1] / "fixtures" / "files"

BY_REGION = """SELECT region, ROUND(SUM(amount), 2) AS revenue
FROM files.main.sales
GROUP BY region
ORDER BY revenue DESC"""
BY_PRODUCT = "SELECT product, SUM(quantity) AS units FROM sales GROUP BY product ORDER BY product"
BY_DAY = "SELECT order_date, SUM(amount) AS revenue FROM sales GROUP BY 1 ORDER BY 1"
BUDGET_VS_SALES = """SELECT b.team, b.budget, (SELECT COUNT(*) FROM sales) AS sales_rows
FROM budget AS b
ORDER BY b.team"""


REPLIES = {
    "test_a_csv_in_a_mention_is_loaded_and_answered": [
        sql_reply(BY_REGION, "Revenue by region in the uploaded file."),
        sql_reply(BY_PRODUCT, "Units by product."),
        sql_reply(BY_DAY, "Revenue by day."),
        sql_reply(BUDGET_VS_SALES, "Budgets next to the number of sales rows."),
    ],
    "test_after_a_restart_the_threads_sandbox_still_answers": [
        sql_reply(BY_PRODUCT, "Units by product.")
    ],
}


@dataclass
class World:
    """What the tests of this module share: the stand-in and the shared bot."""

    slack: SlackStandin
    tmp: Path
    stack: ExitStack
    shared: SharedBot
    processes: list[BotProcess] = field(default_factory=list)

    def bot(self, name: str, replies: list[Any], data_dir: Path, **env: str) -> BotProcess:
        """Start a bot process on `data_dir` with its own script (stopped at the end of the
        module if a test has not stopped it)."""
        script = write_script(self.tmp / f"{name}.jsonl", replies)
        process = BotProcess(slack=self.slack, data_dir=data_dir, script=script, env=env)
        self.processes.append(self.stack.enter_context(process))
        return process


@pytest.fixture(scope="module")
def world(demo_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("e2e-files")
    with SlackStandin() as slack, ExitStack() as stack:

        def start(script: Path, data_dir: Path) -> BotProcess:
            data_dir = data_dir_with(data_dir, demo_file)
            env = {"QUERYBOT_FILE_MAX_MB": "0.01"}
            return BotProcess(slack=slack, data_dir=data_dir, script=script, env=env)

        shared = stack.enter_context(SharedBot(REPLIES, start, tmp / "shared"))
        yield World(slack, tmp, stack, shared)


@pytest.fixture
def bot(world: World, request: pytest.FixtureRequest) -> BotProcess:
    return world.shared.for_test(request)


@pytest.fixture(autouse=True)
def clean(world: World, bot: BotProcess) -> Iterator[None]:
    started = len(world.processes)
    yield
    for process in [bot, *world.processes[started:]]:
        print(process.log()[-6000:])  # shown when the test failed
    world.slack.assert_clean()


def thread_id(thread: Thread) -> str:
    return f"{TEAM_ID}:{thread.channel}:{thread.ts}"


def share(slack: SlackStandin, name: str, content: bytes | None = None) -> dict[str, Any]:
    """A person uploads a fixture file (or `content`) to Slack."""
    data = (FILES / name).read_bytes() if content is None else content
    return slack.add_file(name, data)


def mention_with_files(
    bot: BotProcess, text: str, files: list[dict[str, Any]], *, thread: Thread | None = None
) -> Thread:
    """`@querybot text` with files attached, as Slack delivers it: an `app_mention` whose files
    are bare ids, and the `file_share` message event of the same message (full file objects)."""
    channel = thread.channel if thread else payloads.new_channel()
    body = payloads.mention(channel, text, thread_ts=thread.ts if thread else None)
    body["event"]["files"] = [{"id": f["id"]} for f in files]
    body["event"]["upload"] = True
    bot.send_event(body)
    ts = body["event"]["ts"]
    echo = payloads.message(
        channel, body["event"]["text"], thread_ts=thread.ts if thread else None, ts=ts
    )
    echo["event"] |= {"subtype": "file_share", "files": files, "upload": True}
    bot.send_event(echo)
    return thread or Thread(channel, ts)


def share_in_thread(
    bot: BotProcess, thread: Thread, files: list[dict[str, Any]], text: str = ""
) -> None:
    """A file shared as a reply in the thread, without a mention."""
    body = payloads.message(thread.channel, text, thread_ts=thread.ts, subtype="file_share")
    body["event"] |= {"files": files, "upload": True}
    bot.send_event(body)


def csv_rows(sql: str, **files: str) -> list[tuple[Any, ...]]:
    """What `sql` returns over the fixture files, computed by the test itself with DuckDB
    (each keyword names a view over a fixture file)."""
    with duckdb.connect() as con:
        for view, name in files.items():
            con.execute(f"CREATE VIEW {view} AS SELECT * FROM read_csv('{FILES / name}')")
        return con.execute(sql).fetchall()


def approve(bot: BotProcess, slack: SlackStandin, thread: Thread) -> Posted:
    """Approve the thread's proposal waiting for a click; return its result."""
    proposal = flow.approved(bot, slack, thread)
    return next(
        m
        for m in slack.thread(thread.channel, thread.ts)
        if "Sources:" in m.all_text() and float(m.ts) > float(proposal.ts)
    )


def sandbox_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "sandboxes").glob("*/files.duckdb"))


# -- a file in a mention -----------------------------------------------------------------------


def test_a_csv_in_a_mention_is_loaded_and_answered(world: World, bot: BotProcess) -> None:
    slack = world.slack
    sandboxes = len(sandbox_files(bot.data_dir))
    infos, downloads = len(slack.calls_to("files.info")), len(slack.downloads)
    sales = share(slack, "sales.csv")
    thread = mention_with_files(bot, "which region sold the most?", [sales])

    loaded = flow.wait_message(slack, thread, has_text("Loaded sales.csv"), "the load")
    assert loaded.text == (
        "Loaded sales.csv as table `sales` (8 rows, 6 columns). Ask me about it."
    )
    assert "Loading sales.csv" in loaded.history[0][0]
    # the mention's files were bare ids: files.info completed them; the bot token fetched it
    assert [c.params["file"] for c in slack.calls_to("files.info")[infos:]] == [sales["id"]]
    assert slack.downloads[downloads:] == [(sales["id"], "xoxb-standin", 200)]

    proposal = flow.proposal(slack, thread)
    assert "`files.main.sales`" in proposal.all_text()
    result = approve(bot, slack, thread)
    expected = csv_rows(
        "SELECT Region, ROUND(SUM(Amount), 2) FROM s GROUP BY 1 ORDER BY 2 DESC", s="sales.csv"
    )
    assert result.table() == [
        ["Region", "Revenue"],
        *[[region, cell_text(float(revenue))] for region, revenue in expected],
    ]
    assert "Sources: `files.main.sales`" in result.all_text()
    assert f"approved by <@{BOB}>" in result.all_text()
    loads = [m for m in slack.thread(thread.channel, thread.ts) if "Loaded" in m.text]
    assert len(loads) == 1, "the file_share echo of the mention is not loaded twice"
    events = [e["event"] for e in audit_events(bot, thread_id=thread_id(thread))]
    assert events == ["proposed", "approved", "executed"]

    # a follow-up without a mention goes to the same sandbox (here with the short table name)
    flow.reply(bot, thread, "and units by product?")
    result = approve(bot, slack, thread)
    units = csv_rows("SELECT Product, SUM(Quantity) FROM s GROUP BY 1 ORDER BY 1", s="sales.csv")
    assert result.table() == [["Product", "Units"], *[[p, cell_text(n)] for p, n in units]]

    # a proposal waiting when another file is loaded is retired: it cannot run any more
    flow.reply(bot, thread, "revenue by day?")
    waiting = flow.proposal(slack, thread)

    # a second file shared later in the thread, no mention: a second table in the sandbox
    budget = share(slack, "budget.json")
    share_in_thread(bot, thread, [budget], "budgets next to the sales?")
    flow.wait_message(
        slack,
        thread,
        has_text("Loaded budget.json as table `budget` (2 rows, 3 columns)."),
        "the second load",
    )
    retired = flow.wait_message(
        slack, thread, lambda m: m.ts == waiting.ts and "Replaced" in m.all_text(), "retired"
    )
    assert "a file was loaded into this thread" in retired.all_text()
    assert retired.action_values() == {}
    flow.click(bot, waiting, approve=True, user=ALICE)
    note = slack.wait_for(lambda: slack.ephemerals_for(thread.channel, ALICE), what="the note")
    assert "nothing was run" in note[0]["text"]
    retired_id = flow.proposal_id(waiting)
    assert [e["event"] for e in audit_events(bot, proposal_id=retired_id)] == ["proposed"]
    result = approve(bot, slack, thread)
    assert result.table() == [
        ["Team", "Budget", "Sales rows"],
        ["Data", cell_text(120000.5), "8"],
        ["Sales", cell_text(300000.0), "8"],
    ]
    assert len(sandbox_files(bot.data_dir)) == sandboxes + 1

    # the bot's own uploads in the thread (result.csv, chart.png) are never loaded, even when
    # their event names only the bot's user (Bolt's self-event filter)
    own = payloads.message(
        thread.channel, "", thread_ts=thread.ts, user=BOT_USER_ID, subtype="file_share"
    )
    result_csv = share(slack, "result.csv", b"a,b\n1,2\n")
    own["event"] |= {"files": [result_csv], "upload": True}
    bot.send_event(own)
    # then a person shares a file the bot refuses: once that note is there, the thread's job
    # queue has passed anything the bot's own upload would have queued
    share_in_thread(bot, thread, [share(slack, "deck.pptx", b"PK\x03\x04" + bytes(100))])
    flow.wait_message(slack, thread, has_text("deck.pptx is not a CSV"), "the refusal")
    assert not any("result.csv" in m.all_text() for m in slack.thread(thread.channel, thread.ts))
    assert all(d[0] != result_csv["id"] for d in slack.downloads)


def test_a_file_in_a_direct_message(world: World, bot: BotProcess) -> None:
    slack = world.slack
    sandboxes = len(sandbox_files(bot.data_dir))
    channel = "D" + payloads.new_channel()[1:]
    cities = share(slack, "cities.tsv")
    body = payloads.message(channel, "", thread_ts=None, channel_type="im", subtype="file_share")
    body["event"] |= {"files": [cities], "upload": True}
    bot.send_event(body)
    loaded = slack.wait_for(
        lambda: [
            m
            for m in slack.thread(channel, body["event"]["ts"])  # the file's own thread
            if "Loaded cities.tsv" in m.text
        ],
        what="the load in the direct message",
    )
    assert loaded[0].text == (
        "Loaded cities.tsv as table `cities` (2 rows, 3 columns). Ask me about it."
    )
    assert len(sandbox_files(bot.data_dir)) == sandboxes + 1


def test_a_file_shared_in_a_thread_the_bot_is_not_in_is_left_alone(
    world: World, bot: BotProcess
) -> None:
    slack = world.slack
    sandboxes = len(sandbox_files(bot.data_dir))
    thread = Thread(payloads.new_channel(), payloads.new_ts())
    ignored = share(slack, "sales.csv")
    share_in_thread(bot, thread, [ignored], "look at this")
    # then a mention in that thread with a file it refuses: once its note is there, the job
    # queue of the thread has passed the first file
    xlsx = share(slack, "notes.xlsx", b"PK\x03\x04" + b"\x00" * 100)
    mention_with_files(bot, "", [xlsx], thread=thread)
    flow.wait_message(slack, thread, has_text("notes.xlsx is not a CSV"), "the refusal")
    assert len(slack.thread(thread.channel, thread.ts)) == 1
    assert all(d[0] != ignored["id"] for d in slack.downloads)
    assert len(sandbox_files(bot.data_dir)) == sandboxes


def test_unreadable_files_get_a_clear_message(world: World, bot: BotProcess) -> None:
    slack = world.slack
    sandboxes = len(sandbox_files(bot.data_dir))
    broken = share(slack, "broken.csv")
    thread = mention_with_files(bot, "what is the total?", [broken])
    message = flow.wait_message(slack, thread, has_text("Could not read"), "the refusal")
    text = message.all_text()
    assert (
        "Could not read broken.csv as CSV: line 3 has 4 fields but the header has 2 "
        "(separated by commas)." in text
    )
    assert "upload it again" in text
    assert "I did not look at your question" in text

    xlsx = share(slack, "report.xlsx", b"PK\x03\x04" + b"\x00" * 100)
    big = share(slack, "big.csv", b"id,value\n" + b"1,2\n" * 5000)
    thread2 = mention_with_files(bot, "", [xlsx, big])
    message = flow.wait_message(slack, thread2, has_text("is not a CSV"), "the refusals")
    text = message.all_text()
    assert "report.xlsx is not a CSV, Parquet, JSON or SQLite file." in text
    assert "Export it as CSV" in text
    assert "big.csv is 20 KiB; the limit is 10 KiB." in text
    assert all(d[0] != big["id"] for d in slack.downloads), "refused by its size, not fetched"
    for t in (thread, thread2):
        assert not any(APPROVE_ACTION in m.action_values() for m in slack.thread(t.channel, t.ts))
    assert len(sandbox_files(bot.data_dir)) == sandboxes, "no sandbox for refused files"


# -- restart and idle sweep --------------------------------------------------------------------


def loaded(slack: SlackStandin, bot: BotProcess, *names: str) -> Thread:
    """A thread in which a mention with no question, then replies, shared the fixture files
    `names` one by one; returns once the bot has loaded them all."""
    thread = mention_with_files(bot, "", [share(slack, names[0])])
    flow.wait_message(slack, thread, has_text(f"Loaded {names[0]}"), "the load")
    for name in names[1:]:
        share_in_thread(bot, thread, [share(slack, name)])
        flow.wait_message(slack, thread, has_text(f"Loaded {name}"), "the load")
    return thread


def test_after_a_restart_the_threads_sandbox_still_answers(world: World, bot: BotProcess) -> None:
    slack = world.slack
    thread = loaded(slack, bot, "sales.csv")
    flow.reply(bot, thread, "units by product?")
    units = csv_rows("SELECT Product, SUM(Quantity) FROM s GROUP BY 1 ORDER BY 1", s="sales.csv")
    table = [["Product", "Units"], *[[p, cell_text(n)] for p, n in units]]
    assert approve(bot, slack, thread).table() == table
    assert bot.stop() == 0
    again = world.bot(
        "restarted", [sql_reply(BY_PRODUCT, "Units by product, again.")], bot.data_dir
    )
    flow.reply(again, thread, "units by product once more?")
    result = approve(again, slack, thread)
    assert "Units by product, again." in result.text
    assert result.table() == table
    assert again.stop() == 0


def test_an_idle_sandbox_is_swept_and_the_thread_told_to_upload_again(
    world: World, bot: BotProcess
) -> None:
    slack = world.slack
    thread = loaded(slack, bot, "sales.csv", "budget.json")
    assert bot.stop() == 0
    swept = world.bot("swept", [], bot.data_dir, QUERYBOT_FILE_IDLE_S="1")
    swept.wait_log(f"Removed the sandbox of {thread_id(thread)}")
    assert not Sandboxes(bot.data_dir / "sandboxes").exists(thread_id(thread))
    before = len(slack.thread(thread.channel, thread.ts))
    flow.reply(swept, thread, "and by region?", user=ALICE)
    gone = flow.wait_message(
        slack,
        thread,
        has_text("deleted after"),
        "the note that the files are gone",
    )
    assert (
        "The files sales.csv and budget.json shared in this conversation were deleted after "
        "1 second without use" in gone.all_text()
    )
    assert "Upload them again in this thread to keep asking about them" in gone.all_text()
    assert len(slack.thread(thread.channel, thread.ts)) == before + 1
    assert swept.stop() == 0
