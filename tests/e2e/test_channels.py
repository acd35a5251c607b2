"""End to end with a config file (QUERYBOT_CONFIG): one `querybot run --http` process serving four
warehouses, the demo DuckDB shop, a SQLite survey file, and an employees database on the real
PostgreSQL and on the real MariaDB, each mapped to its own channel, and no default. Each channel
gets proposals and answers from its own warehouse; any other channel, and a direct message, gets
a polite note naming the mapped channels, and no model call.

One bot serves the module (shared_bot.py); each test's model replies are in `replies`.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.e2e.shared_bot import Reply, SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, data_dir_with, expected_rows, sql_reply
from tests.support.slack_flow import Thread, has_text
from tests.support.slack_payloads import ALICE, BOB
from tests.support.sql_fixtures import (
    DEPARTMENTS,
    EMPLOYEES,
    Sample,
    mysql_sample,
    postgres_sample,
)
from tests.support.standin import TEAM_ID, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

SHOP = "C0SHOP0001"
SURVEY = "C0SURVEY01"
HR_PG = "C0HRPG0001"
HR_MARIA = "C0HRMARIA1"

SURVEY_SQL = "SELECT answer, COUNT(*) AS answers FROM surveys GROUP BY answer ORDER BY answer"
SHOP_SQL = "SELECT region_name, COUNT(*) AS n FROM demo.main.regions GROUP BY 1 ORDER BY 1"


def headcount_sql(schema: str) -> str:
    return (
        f"SELECT d.dept_name, COUNT(*) AS staff FROM {schema}.employees AS e"
        f" JOIN {schema}.departments AS d ON d.dept_no = e.dept_no"
        " GROUP BY d.dept_name ORDER BY d.dept_name"
    )


#: Staff per department, computed here from the rows the samples loaded.
HEADCOUNT = sorted(
    Counter(dict(DEPARTMENTS)[dept] for *_, dept in EMPLOYEES).items(), key=lambda kv: kv[0]
)


@pytest.fixture(scope="module")
def survey_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("survey") / "survey.db"
    with closing(sqlite3.connect(path)) as con, con:
        con.execute("CREATE TABLE surveys (id INTEGER PRIMARY KEY, answer TEXT NOT NULL)")
        con.executemany(
            "INSERT INTO surveys (answer) VALUES (?)",
            [("yes",), ("no",), ("yes",), ("maybe",), ("yes",)],
        )
    return path


@pytest.fixture(scope="module")
def pg() -> Iterator[Sample]:
    with postgres_sample() as sample:
        yield sample


@pytest.fixture(scope="module")
def maria() -> Iterator[Sample]:
    with mysql_sample() as sample:
        yield sample


def replies(pg: Sample, maria: Sample) -> dict[str, list[Reply]]:
    return {
        "test_the_survey_channel_asks_the_sqlite_file": [
            sql_reply(SURVEY_SQL, "Counts survey answers.")
        ],
        "test_the_shop_channel_asks_the_demo_warehouse": [
            sql_reply(SHOP_SQL, "Lists the regions.")
        ],
        "test_the_hr_channels_ask_the_real_servers[pg]": [
            sql_reply(headcount_sql(pg.schema), "Staff per department.")
        ],
        "test_the_hr_channels_ask_the_real_servers[maria]": [
            sql_reply(headcount_sql(maria.schema), "Staff per department.")
        ],
    }


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin,
    demo_file: Path,
    survey_db: Path,
    pg: Sample,
    maria: Sample,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SharedBot]:
    tmp = tmp_path_factory.mktemp("e2e-channels")
    config = tmp / "querybot.toml"
    config.write_text(
        '[warehouses.shop]\nspec = "demo"\ndescription = "the demo shop"\n'
        '[warehouses.survey]\nspec = "sqlite:///${SURVEY_PATH}"\n'
        '[warehouses.hr_pg]\nspec = "${HR_PG_URL}"\n'
        f'[warehouses.hr_maria]\nspec = "{maria.url}"\n'
        f'[channels]\n{SHOP} = "shop"\n{SURVEY} = "survey"\n'
        f'{HR_PG} = "hr_pg"\n{HR_MARIA} = "hr_maria"\n',
        encoding="utf-8",
    )
    env = {"QUERYBOT_CONFIG": str(config), "SURVEY_PATH": str(survey_db), "HR_PG_URL": pg.url}

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir = data_dir_with(data_dir, demo_file)
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(replies(pg, maria), start, tmp) as shared:
        yield shared


def answer(bot: BotProcess, standin: SlackStandin, thread: Thread) -> tuple[str, str]:
    """Approve the thread's proposal; return the proposal's and the result's text."""
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True, user=BOB)
    return proposal.all_text(), flow.result(standin, thread).all_text()


def test_the_survey_channel_asks_the_sqlite_file(
    bot: BotProcess, standin: SlackStandin, survey_db: Path
) -> None:
    thread = flow.ask(bot, "how did people answer the survey?", channel=SURVEY)
    proposal, result = answer(bot, standin, thread)
    assert "Counts survey answers." in proposal and "`main.surveys`" in proposal
    table = flow.result(standin, thread).table()
    with closing(sqlite3.connect(survey_db)) as con:
        expected = con.execute(SURVEY_SQL).fetchall()
    assert table == [["Answer", "Answers"], *[[a, cell_text(n)] for a, n in expected]]
    assert "Sources: `main.surveys`" in result and "sqlite" in result
    thread_id = f"{TEAM_ID}:{SURVEY}:{thread.ts}"
    assert [e["event"] for e in audit_events(bot, thread_id=thread_id)] == [
        "proposed",
        "approved",
        "executed",
    ]


def test_the_shop_channel_asks_the_demo_warehouse(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "which regions are there?", channel=SHOP)
    proposal, result = answer(bot, standin, thread)
    assert "Lists the regions." in proposal and "`demo.main.regions`" in proposal
    table = flow.result(standin, thread).table()
    expected = expected_rows(demo_file, SHOP_SQL)
    assert table == [["Region name", "N"], *[[r, cell_text(n)] for r, n in expected]]
    assert "Sources: `demo.main.regions`" in result and "duckdb" in result


@pytest.mark.parametrize(
    ("channel", "engine"), [(HR_PG, "postgresql"), (HR_MARIA, "mysql")], ids=["pg", "maria"]
)
def test_the_hr_channels_ask_the_real_servers(
    bot: BotProcess,
    standin: SlackStandin,
    pg: Sample,
    maria: Sample,
    channel: str,
    engine: str,
) -> None:
    sample = pg if engine == "postgresql" else maria
    thread = flow.ask(bot, "how many people work in each department?", channel=channel)
    proposal, result = answer(bot, standin, thread)
    assert f"`{sample.schema}.employees`" in proposal
    table = flow.result(standin, thread).table()
    assert table == [["Dept name", "Staff"], *[[d, cell_text(n)] for d, n in HEADCOUNT]]
    sources = result[result.index("Sources:") :]
    assert f"`{sample.schema}.employees`" in sources and f"`{sample.schema}.departments`" in sources
    assert engine in sources


def test_an_unmapped_channel_gets_a_polite_note_and_no_model_call(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "revenue last month?", channel=payloads.new_channel())
    note = flow.wait_message(standin, thread, has_text("not connected to a warehouse"), "the note")
    text = note.all_text()
    assert f"<#{SHOP}> for shop (the demo shop)" in text and f"<#{SURVEY}> for survey" in text
    assert "map this channel in its config file" in text
    assert note.action_values() == {}
    direct = f"D{ALICE[1:]}"
    bot.send_event(payloads.message(direct, "revenue?", thread_ts=None, channel_type="im"))
    standin.wait_for(
        lambda: [
            m
            for (channel, _), m in standin.messages.items()
            if channel == direct and "not connected to a warehouse" in m.all_text()
        ],
        what="the note in the direct message",
    )
    # nothing reached a warehouse: no audited thread in either
    threads = {e["thread_id"].split(":")[1] for e in audit_events(bot)}
    assert not threads & {thread.channel, direct}
    assert "ScriptExhausted" not in bot.log()


def test_the_home_tab_lists_every_warehouse(bot: BotProcess, standin: SlackStandin) -> None:
    bot.send_event(payloads.home_opened(BOB))
    [published] = standin.wait_for(lambda: standin.published_views, what="the Home tab")
    text = "\n".join(b.get("text", {}).get("text", "") for b in published["view"]["blocks"])
    assert "*survey*" in text and "`main.surveys`" in text
    assert "*shop*" in text and "`demo.main.regions`" in text


def test_sigterm_closes_every_warehouse_cleanly(bot: BotProcess) -> None:
    assert bot.stop() == 0
    assert "Traceback" not in bot.log() and "Closing warehouse" not in bot.log()
