"""The real `querybot run --http` process under signed requests Slack never sends (issue 36, item
5): a valid signature on a body that is not form-encoded, a `payload=` that is not JSON, JSON
that is not an object, interactive payloads missing what the bot reads or holding the wrong
types, button values and modal metadata the bot never wrote, unknown types, slash commands,
events without their event. Eight of eleven such payloads once got HTTP 500 with a traceback.

Each must get a 4xx (the checks of bot/payloads.py answer 400 and say why), never a 500; the
log holds no traceback; and the same process then answers good requests, a question and the
click on its proposal among them, so the checks let through what Slack really sends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support.botproc import (
    SECRET,
    BotProcess,
    data_dir_with,
    expected_rows,
    sql_reply,
    write_script,
)
from tests.support.malformed_bodies import JSON, MALFORMED, ORDERS
from tests.support.slack_payloads import signed_headers
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-malformed")
    script = write_script(tmp / "script.jsonl", [sql_reply(ORDERS, "Counts all orders.")])
    with BotProcess(
        slack=standin, data_dir=data_dir_with(tmp / "data", demo_file), script=script
    ) as p:
        yield p


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_signed_malformed_request_gets_a_4xx_and_no_traceback(bot: BotProcess, name: str) -> None:
    body, content_type = MALFORMED[name]
    status, answer = bot.post(body, content_type, signed_headers(SECRET, body))
    assert status == 400, (status, answer)
    assert answer.startswith("Not a request querybot serves: "), answer
    assert bot.running
    assert "Traceback" not in bot.log()


def test_the_same_bodies_unsigned_are_refused_401_unread(bot: BotProcess) -> None:
    for body, content_type in list(MALFORMED.values())[:10]:
        assert bot.post(body, content_type, signed_headers("another secret", body))[0] == 401


def test_good_requests_are_answered_after_the_malformed_ones(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    for body, content_type in MALFORMED.values():
        assert bot.post(body, content_type, signed_headers(SECRET, body))[0] == 400
    text = json.dumps({"type": "url_verification", "challenge": "still-here", "token": "x"})
    status, answer = bot.post(text, JSON, signed_headers(SECRET, text))
    assert (status, json.loads(answer)) == (200, {"challenge": "still-here"})

    thread = flow.ask(bot, "how many orders are there?")
    flow.click(bot, flow.proposal(standin, thread), approve=True)
    ((orders,),) = expected_rows(demo_file, ORDERS)
    assert flow.values(flow.result(standin, thread)) == {"Orders": cell_text(orders)}
    log = bot.log()
    assert "Refused a signed request that Slack would not send (400)" in log
    assert "Traceback" not in log
    forged = [line for line in log.splitlines() if line.startswith("INFO forged")]
    assert not forged, "a reason quoting the body is escaped"
    assert "view.state.values.x\\nINFO forged log line" in log
