"""The Slack flow a warehouse stand-in goes through end to end (BigQuery's emulator, fakesnow):
the bot process on that warehouse alone, a `sales` table answered by region and approved, and a
rejected proposal that runs nothing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from bot.blocks import cell_text
from tests.e2e.shared_bot import Reply, SharedBot
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events
from tests.support.slack_payloads import BOB
from tests.support.standin import SlackStandin

#: The rows of the `sales` table each stand-in is seeded with: (region, amount).
SALES = [("North", 10.5), ("North", 4.5), ("South", 7.0), ("East", 1.25)]


@contextmanager
def warehouse_bots(
    standin: SlackStandin, env: Mapping[str, str], replies: Mapping[str, Sequence[Reply]], tmp: Path
) -> Iterator[SharedBot]:
    """The module's shared bot on the warehouse `env` names (no demo database beside it)."""

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir.mkdir()
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=dict(env))

    with SharedBot(replies, start, tmp) as shared:
        yield shared


def approved_by_region(
    bot: BotProcess, standin: SlackStandin, *, table: str, header: list[str], engine: str
) -> None:
    """Ask for sales by region: the proposal names `table`, and once approved the result holds
    the right sums under `header`, its sources naming `engine` and the approver."""
    thread = flow.ask(bot, "sales by region?")
    proposal = flow.proposal(standin, thread)
    text = proposal.all_text()
    assert "Sales by region." in text and table in text

    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    assert result.table() == [
        header,
        ["North", cell_text(15.0)],
        ["South", cell_text(7.0)],
        ["East", cell_text(1.25)],
    ]
    sources = result.all_text()
    assert "*3 rows*" in sources and engine in sources
    assert f"approved by <@{BOB}>" in sources


def rejected_runs_nothing(bot: BotProcess, standin: SlackStandin) -> None:
    """A rejected proposal is audited as proposed and rejected, and nothing more."""
    thread = flow.ask(bot, "how many sales?")
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=False)
    bot.wait_log(f"Decision on proposal {pid} done: rejected")
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed", "rejected"]
