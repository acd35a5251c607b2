"""The Slack side of the end-to-end tests of `run_as` (docs/access.md), shared by each engine's
module: the people (a stand-in whose users.info and usergroups.users.list know them), a config
file mapping them to identities, and what only someone whose identity could run a query may
click (Edit SQL, "How did you get this?").

Alice is listed by user id, Bob found by his email address, Dave through a user group; Nobody
is in no rule (refused).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.access.identity import REFUSED
from bot.blocks import EDIT_ACTION, EXPLAIN_ACTION
from bot.blocks.views import EDIT_BLOCK
from bot.listeners.views.edit_submission import NOT_YOURS
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import TEAM_ID, Posted, SlackStandin

DAVE, NOBODY = "U0DAVE001", "U0NOBODY1"
EAST_GROUP = "S0EAST001"
#: What users.info says of each person's email address (Dave's profile shows none).
EMAILS = {
    ALICE: "alice@example.com",
    BOB: "bob@example.com",
    DAVE: "",
    NOBODY: "nobody@else.org",
}

#: The start of the note of a refused Edit SQL click, and of a refused "How did you get this?".
EDIT_REFUSED = "You can edit only queries you could run yourself"
EXPLAIN_REFUSED = "I can show how an answer was made only to people who could run its query"


@contextmanager
def people() -> Iterator[SlackStandin]:
    """A stand-in that knows everyone's email address, and Dave as the east group's member."""
    with SlackStandin() as slack:
        slack.emails.update(EMAILS)
        slack.usergroups[EAST_GROUP] = [DAVE]
        yield slack


def run_as_env(tmp: Path, spec: str, rules: str, *, more: str = "") -> dict[str, str]:
    """The bot's environment for a config file whose one warehouse, `shop` (the default), is
    `spec` with the `run_as` `rules` (TOML lines); `more` follows them (allowlists, channels)."""
    config = tmp / "querybot.toml"
    config.write_text(
        f'default = "shop"\n[warehouses.shop]\nspec = "{spec}"\n'
        f"[warehouses.shop.run_as]\n{rules}{more}",
        encoding="utf-8",
    )
    return {"QUERYBOT_CONFIG": str(config)}


def note(bot: BotProcess, standin: SlackStandin, payload: dict[str, Any]) -> dict[str, Any]:
    """Deliver the click `payload`; the ephemeral message it brings the person who clicked."""
    channel, user = payload["channel"]["id"], payload["user"]["id"]
    before = len(standin.ephemerals_for(channel, user))
    bot.send_click(payload)
    got = standin.wait_for(
        lambda: standin.ephemerals_for(channel, user)[before:], what=f"a note to {user}"
    )
    return got[0]


def explained(bot: BotProcess, standin: SlackStandin, result: Posted, user: str) -> dict[str, Any]:
    """Press "How did you get this?" under `result` as `user`: what they are sent."""
    return note(bot, standin, payloads.click(result, EXPLAIN_ACTION, user=user))


def unmapped_is_refused(bot: BotProcess, standin: SlackStandin) -> None:
    """Nobody asks: they are told they are not mapped, no model call is made, nothing is
    proposed or run (the audit log has no event of the thread)."""
    thread = flow.ask(bot, "sales by region?", user=NOBODY)
    refusal = flow.wait_message(
        standin, thread, flow.has_text("not mapped to an identity"), "the refusal"
    )
    assert REFUSED in refusal.all_text()
    assert "Traceback" not in refusal.all_text()
    thread_id = f"{TEAM_ID}:{thread.channel}:{thread.ts}"
    bot.wait_log(f"Refused a question in {thread_id}")
    assert audit_events(bot, thread_id=thread_id) == []
    asked = standin.thread(thread.channel, thread.ts)
    assert not [m for m in asked if m.action_values()]


def only_who_could_run_it_may_edit_or_explain(
    bot: BotProcess,
    standin: SlackStandin,
    thread: flow.Thread,
    *,
    asker: str,
    cannot: Mapping[str, str],
) -> Posted:
    """`thread`'s proposal waits, asked by `asker`, whose identity reads its tables. Each person
    of `cannot` (user -> what their note must say, such as the table they may not read) may not
    open its Edit SQL box, nor submit an edit in one, nor, once `asker` approved it, read how its
    answer was made; each is told so privately. `asker` may do each. The answer."""
    card = flow.proposal(standin, thread)
    pid = flow.proposal_id(card)
    for user, says in cannot.items():
        click = payloads.click(card, EDIT_ACTION, user=user)
        told = note(bot, standin, click)
        assert EDIT_REFUSED in told["text"] and says in told["text"], told["text"]
        assert "nothing changed" in told["text"]
        assert [v for v in standin.opened_views if v["trigger_id"] == click["trigger_id"]] == []
    # a submission of the box the asker opened, sent as someone who may not edit, is refused too
    view = flow.open_edit(bot, standin, card, user=asker)
    for user in cannot:
        answer = flow.submit_edit(bot, view, "SELECT 1", user=user)
        assert answer == {"response_action": "errors", "errors": {EDIT_BLOCK: NOT_YOURS}}
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]

    flow.click(bot, card, approve=True, user=asker)
    result = flow.result(standin, thread)
    for user, says in cannot.items():
        told = explained(bot, standin, result, user)
        assert EXPLAIN_REFUSED in told["text"] and says in told["text"], told["text"]
        assert "How I got this" not in json.dumps(told)
    account = explained(bot, standin, result, asker)
    assert account["text"].startswith("How I got this")
    return result
