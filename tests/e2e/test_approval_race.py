"""End to end: the approval race of issue 15. The person who asked may not approve their own
question (`QUERYBOT_NO_SELF_APPROVAL=true`, `QUERYBOT_APPROVERS` names Bob), not even with Approve
clicks that arrive while a refused Edit SQL of theirs moves the proposal PENDING -> RUNNING ->
PENDING. And a click on a card naming other SQL than the proposal's is refused.

The real bot process (signed HTTP, the Slack stand-in), once with SQLite state and once with
PostgreSQL state (QUERYBOT_STATE_URL). It runs with one worker, so while a slow question of
another thread holds it, the refused edit stays claimed (RUNNING) and the clicks hammer that
state and then the release. Nothing may run, whatever the interleaving: every click is refused.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from agent.memory.audit import sql_sha256
from bot.blocks import APPROVE_ACTION, REJECT_ACTION, cell_text
from bot.listeners.actions.clicks import OUT_OF_DATE
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import (
    BotProcess,
    audit_events,
    data_dir_with,
    expected_rows,
    sql_reply,
    write_script,
)
from tests.support.pgdb import scratch_database
from tests.support.slack_flow import has_text
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

ORDER_COUNT = "SELECT COUNT(*) AS orders FROM demo.main.orders"
REGION_COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
REFUSED_EDIT = "DELETE FROM demo.main.orders"
SELF = "You asked this question, so someone else must approve it. Nothing was run."
#: Refused edits, each held claimed behind a slow question while the clicks go on.
CYCLES = 2
CLICKERS = 6
#: Clicks each clicker still sends after the last edit was refused (and released).
AFTER = 5
SCRIPT = [
    sql_reply(ORDER_COUNT, "Counts all orders."),
    *[{**sql_reply(REGION_COUNT, "Counts regions."), "__delay__": 1} for _ in range(CYCLES)],
]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def bot(
    request: pytest.FixtureRequest,
    standin: SlackStandin,
    demo_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp(f"e2e-race-{request.param}")
    env = {
        "QUERYBOT_APPROVERS": BOB,
        "QUERYBOT_NO_SELF_APPROVAL": "true",
        "QUERYBOT_WORKERS": "1",
    }
    with ExitStack() as stack:
        if request.param == "postgres":
            env["QUERYBOT_STATE_URL"] = stack.enter_context(scratch_database("race"))
        script = write_script(tmp / "script.jsonl", SCRIPT)  # type: ignore[arg-type]
        data_dir = data_dir_with(tmp / "data", demo_file)
        yield stack.enter_context(
            BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)
        )


class Clickers:
    """CLICKERS threads sending Alice's Approve clicks on a card until `stop()`, and AFTER more
    each after that (so some arrive after the last release)."""

    def __init__(self, bot: BotProcess, card: Posted) -> None:
        self.counts = [0] * CLICKERS
        self.errors: list[Exception] = []
        self._done = threading.Event()
        self._threads = [
            threading.Thread(target=self._click, args=(bot, card, i), daemon=True)
            for i in range(CLICKERS)
        ]
        for t in self._threads:
            t.start()

    def _click(self, bot: BotProcess, card: Posted, i: int) -> None:
        after = 0
        try:
            while after < AFTER:
                after += self._done.is_set()
                flow.click(bot, card, approve=True, user=ALICE)
                self.counts[i] += 1
        except Exception as exc:  # reported by the test
            self.errors.append(exc)

    def stop(self) -> int:
        """Let each thread send its last clicks; return how many clicks were sent in all."""
        self._done.set()
        for t in self._threads:
            t.join(60)
        assert self.errors == [] and min(self.counts) >= AFTER
        return sum(self.counts)


def tampered(card: Posted, sha: str) -> Posted:
    """`card` with buttons naming `sha` as the SQL they show."""
    pid = flow.proposal_id(card)
    value = json.dumps({"p": pid, "h": sha})
    blocks = [
        {**b, "elements": [{**e, "value": value} for e in b["elements"]]}
        if b["type"] == "actions"
        else b
        for b in card.blocks
    ]
    return Posted(card.channel, card.ts, card.thread_ts, card.text, blocks)


def test_self_approvals_racing_a_refused_edit_run_nothing(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many orders?")
    card = flow.proposal(standin, thread)
    pid = flow.proposal_id(card)
    view = flow.open_edit(bot, standin, card, user=ALICE)  # the asker may edit their question

    clickers = Clickers(bot, card)
    try:
        for cycle in range(CYCLES):
            slow = flow.ask(bot, "how many regions?")  # holds the only worker for a second
            bot.wait_log(rf"Question in \S+:{slow.channel}:{slow.ts} from")
            assert flow.submit_edit(bot, view, REFUSED_EDIT, user=ALICE) == {}
            standin.wait_thread(
                thread.channel,
                thread.ts,
                lambda ms, n=cycle + 1: len([m for m in ms if "not accepted" in m.all_text()]) >= n,
                what=f"refusal {cycle + 1} of the edit",
            )
    finally:
        clicks = clickers.stop()
    assert bot.log().count(f"Edit of proposal {pid} done: failed") == CYCLES

    # Every click was refused for who clicked, whatever the proposal's state at that moment.
    notes = standin.wait_for(
        lambda: (n := standin.ephemerals_for(thread.channel, ALICE)) and len(n) >= clicks and n,
        what=f"{clicks} notes to Alice",
    )
    assert [n["text"] for n in notes] == [SELF] * clicks
    # Nothing ran: no approval, no result, and the card still waits with its buttons.
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]
    messages = standin.thread(thread.channel, thread.ts)
    assert not [m for m in messages if "Sources:" in m.all_text() or "Approved" in m.all_text()]
    assert flow.proposal_id(flow.proposal(standin, thread)) == pid

    # A card naming other SQL is refused, even for Bob, and for Reject as for Approve.
    stale = tampered(card, sql_sha256(REGION_COUNT))
    for action in (APPROVE_ACTION, REJECT_ACTION):
        bot.send_click(payloads.click(stale, action, user=BOB))
    bob = standin.wait_for(
        lambda: (n := standin.ephemerals_for(thread.channel, BOB)) and len(n) >= 2 and n,
        what="two notes to Bob",
    )
    assert [n["text"] for n in bob] == [OUT_OF_DATE] * 2
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]

    # The proposal was waiting all along: Bob's click on the real card runs it, once.
    flow.click(bot, card, approve=True, user=BOB)
    result = flow.result(standin, thread)
    assert flow.values(result) == {"Orders": cell_text(expected_rows(demo_file, ORDER_COUNT)[0][0])}
    bot.wait_log(f"Decision on proposal {pid} done: answer")
    ran = audit_events(bot, proposal_id=pid)
    assert [e["event"] for e in ran] == ["proposed", "approved", "executed"]
    assert [e["actor"] for e in ran[1:]] == [BOB, BOB]
    # the hash of the text the card showed: ORDER_COUNT as the gate writes it
    shown = "SELECT\n  COUNT(*) AS orders\nFROM demo.main.orders"
    assert {e["sql_sha256"] for e in ran} == {sql_sha256(shown)}
    assert has_text(f"Approved by <@{BOB}>")(standin.thread(thread.channel, thread.ts)[0])
