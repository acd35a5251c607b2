"""Nothing one identity may read reaches another: end to end through the real `querybot run
--http` process, the Slack stand-in and PostgreSQL with row-level security
(tests/support/pg_roles.py, its rows replaced here by distinctive markers: west sees the
Quokkaland rows of shop.sales and shop.salaries, east the Marmotville rows, nobody the Narwhalia
one), in a channel whose answers are private and in one whose answers go to the thread.

Bob (west) and Alice (east; Dave approves for her) ask in the same channel, each about a region
only their rows hold, named in the question and in the approved SQL: so an example, a profiled
value or a follow-up carried from one to the other would carry that name. Afterwards
**everything the stand-in received** (tests/support/received.py: every string and number of every
API call, so every version of every message, blocks, buttons, chart data, ephemeral messages,
App Home views, and the bytes of every uploaded file) and every prompt the scripted model
received is scanned: nothing addressed to one of them holds a row value, table, column or
example only the other may read, and nothing addressed to no one in particular holds any; and in
the private channel no result at all reaches the channel. The proposal cards stay in the thread
(question, SQL and the tables it reads), since whoever approves must see them: docs/access.md
says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.run_as_flow import DAVE, explained, people, run_as_env
from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, sql_reply
from tests.support.pg_roles import RlsWarehouse, rls_warehouse
from tests.support.received import Audience, Piece, in_threads, leaks, mark, received
from tests.support.slack_payloads import ALICE, BOB
from tests.support.sql_fixtures import pg_connect
from tests.support.standin import Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

#: The channel of each way answers go.
CHANNELS = {"private": "C0PRIV001", "thread": "C0THRD001"}
#: shop.sales: west's region, east's, and one nobody is mapped to; shop.salaries (west's).
SALES = [
    ("Quokkaland", 4817263),
    ("Quokkaland", 4817290),
    ("Marmotville", 5928374),
    ("Marmotville", 5928391),
    ("Narwhalia", 9182736),
]
SALARY = ("Xanthippe", 8273645)
SALARIES = "SELECT name, salary FROM shop.salaries"


def sales_in(region: str) -> str:
    return f"SELECT region, amount FROM shop.sales WHERE region = '{region}' ORDER BY amount"


SCRIPT = [
    sql_reply(SALARIES, "Pay by name."),  # Bob
    sql_reply(sales_in("Quokkaland"), "Sales in Quokkaland."),  # Bob
    sql_reply(sales_in("Marmotville"), "Sales in Marmotville."),  # Alice
    sql_reply(SALARIES, "Pay by name."),  # Bob again: his examples are shown to him
]
TEST = "test_nothing_one_identity_may_read_reaches_the_other"
REPLIES = {f"{TEST}[{answers}]": SCRIPT for answers in CHANNELS}

#: Row values only (never in a question or SQL): may not reach the channel of private answers.
#: Amounts as digits or with thousands separators.
WEST_ROWS = [r"4,?817,?2(63|90)", r"xanthippe", r"8,?273,?645"]
EAST_ROWS = [r"5,?928,?3(74|91)"]
NOBODYS = [r"narwhalia", r"9,?182,?736"]
#: What only west may read (its rows, its region, its table and column, its example's
#: question), what only east may read, and what nobody may.
MARKERS = {
    "bob": [*WEST_ROWS, r"quokkaland", r"salar", r"pay by name\?"],
    "alice": [*EAST_ROWS, r"marmotville"],
    "": NOBODYS,
}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[RlsWarehouse]:
    with rls_warehouse() as found:
        with pg_connect(found.database) as admin, admin.cursor() as cur:
            cur.execute("DELETE FROM shop.sales")
            cur.executemany("INSERT INTO shop.sales VALUES (%s, %s)", SALES)
            cur.executemany(
                "INSERT INTO shop.region_access VALUES (%s, %s)",
                [(found.west, "Quokkaland"), (found.east, "Marmotville")],
            )
            cur.execute("UPDATE shop.salaries SET name = %s, salary = %s", SALARY)
            cur.execute("ANALYZE")
        yield found


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with people() as slack:
        yield slack


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, warehouse: RlsWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    tmp = tmp_path_factory.mktemp("e2e-run-as-scan")
    env = run_as_env(
        tmp,
        warehouse.url,
        f'users = {{ {ALICE} = "{warehouse.east}", {DAVE} = "{warehouse.east}" }}\n'
        f'emails = {{ "bob@example.com" = "{warehouse.west}" }}\n',
        more="[channels]\n"
        + "".join(
            f'{c} = {{ warehouse = "shop", answers = "{a}" }}\n' for a, c in CHANNELS.items()
        ),
    )
    # one row shown: a longer result comes with its CSV (in a thread) or says why not
    env["QUERYBOT_DISPLAY_ROWS"] = "1"

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir.mkdir()
        seen(script).touch()  # the scripted model records every prompt there
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(REPLIES, start, tmp) as shared:
        yield shared


def seen(script: Path) -> Path:
    return script.with_suffix(".seen.jsonl")


def prompts(bot: BotProcess) -> list[str]:
    """Every prompt the bot's scripted model received, oldest first, as one text each."""
    lines = seen(bot.script).read_text(encoding="utf-8").splitlines()
    return ["\n".join(m["content"] for m in json.loads(line)) for line in lines]


def json_text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


class Channel:
    """One channel of the test, as its people see it."""

    def __init__(self, bot: BotProcess, standin: SlackStandin, answers: str) -> None:
        self.bot, self.standin = bot, standin
        self.private = answers == "private"
        self.id = CHANNELS[answers]

    def ask(self, question: str, *, asker: str, approver: str) -> Posted:
        """Ask, approve as `approver`, wait for the answer; the card."""
        thread = flow.ask(self.bot, question, user=asker, channel=self.id)
        card = flow.proposal(self.standin, thread)
        said = "sent only to" if self.private else f"visible to everyone in <#{self.id}>"
        assert said in card.all_text()
        flow.click(self.bot, card, approve=True, user=approver)
        self.bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
        return card

    def result(self, user: str, card: Posted) -> Posted:
        """The result of `card`'s question as `user` sees it (privately, or in its thread)."""
        if not self.private:
            return flow.result(self.standin, flow.Thread(self.id, card.thread_ts or ""))
        pid = flow.proposal_id(card)
        found = next(
            e
            for e in self.standin.ephemerals_for(self.id, user)
            if "Sources:" in json_text(e) and pid in json_text(e)
        )
        assert found.get("thread_ts") == card.thread_ts
        return Posted(self.id, "", card.thread_ts, found["text"], found["blocks"])

    def home(self, user: str) -> str:
        before = len(self.standin.published_views)
        self.bot.send_event(payloads.home_opened(user))
        views = self.standin.wait_for(
            lambda: self.standin.published_views[before:], what=f"{user}'s Home"
        )
        return json_text(views[0]["view"])

    def audience(self, users: set[str], cards: list[Posted]) -> Audience:
        """`users`, and the threads of `cards` in this channel."""
        threads = frozenset((self.id, c.thread_ts or "") for c in cards)
        return Audience(frozenset(users), threads)


@pytest.mark.parametrize("answers", list(CHANNELS))
def test_nothing_one_identity_may_read_reaches_the_other(
    bot: BotProcess, standin: SlackStandin, answers: str
) -> None:
    channel = Channel(bot, standin, answers)
    since, asked_before = mark(standin), len(prompts(bot))
    pay = channel.ask("pay by name?", asker=BOB, approver=BOB)
    bobs_sales = channel.ask("sales by region in Quokkaland?", asker=BOB, approver=BOB)
    alices = channel.ask("pay and sales by region in Marmotville?", asker=ALICE, approver=DAVE)
    again = flow.ask(bot, "pay by name and sales by region again?", user=BOB, channel=channel.id)
    bobs_again = flow.proposal(standin, again)

    # each sees their own rows
    bob_pay = channel.result(BOB, pay)
    assert "Xanthippe" in bob_pay.all_text()
    assert "Quokkaland" in channel.result(BOB, bobs_sales).all_text()
    for user in (ALICE, DAVE):
        assert "Marmotville" in channel.result(user, alices).all_text()
    if channel.private:
        assert (
            "The whole result comes as a file in your direct"
            in channel.result(ALICE, alices).all_text()
        )
    else:  # the CSV of Alice's two rows: hers
        [csv] = standin.uploads_in(channel.id, alices.thread_ts)
        assert csv.filename == "result.csv" and b"5928391" in csv.content
    assert explained(bot, standin, bob_pay, BOB)["text"].startswith("How I got this")
    account = explained(bot, standin, channel.result(ALICE, alices), ALICE)
    assert account["text"].startswith("How I got this")
    homes = {user: channel.home(user) for user in (ALICE, BOB, DAVE)}
    assert "shop.salaries" in homes[BOB] and "shop.salaries" not in homes[ALICE]
    shown = prompts(bot)[asked_before:]
    assert len(shown) == 4
    # Bob's own examples are shown to him (so their absence from Alice's prompt means something)
    assert "Q: pay by name?" in shown[3] and "Q: sales by region in Quokkaland?" in shown[3]
    assert "CREATE TABLE shop.salaries" in shown[0] and "CREATE TABLE shop.sales" in shown[2]

    pieces = received(standin, since)
    if channel.private:
        # the thread is told where each answer went; the channel gets no result and no file,
        # and no row of anyone, in any version of any message
        public = in_threads(pieces, channel.id)
        notes = "\n".join(p.text for p in public if "sent privately" in p.text)
        assert f"The answer was sent privately to <@{ALICE}> and <@{DAVE}>" in notes
        assert [p.method for p in public if "Sources:" in p.text] == []
        assert [p for p in public if p.method.startswith(("upload", "files."))] == []
        rows = {"": [*WEST_ROWS, *EAST_ROWS, *NOBODYS]}
        assert leaks(public, {}, rows) == []

    # what went to each person holds nothing only the other may read, and what went to nobody
    # in particular holds nothing of anyone's
    audiences = {
        "alice": channel.audience({ALICE, DAVE}, [alices]),
        "bob": channel.audience({BOB}, [pay, bobs_sales, bobs_again]),
    }
    asked_by = [BOB, BOB, ALICE, BOB]
    pieces += [Piece("prompt", user=u, text=t) for u, t in zip(asked_by, shown, strict=True)]
    assert leaks(pieces, audiences, MARKERS) == []
