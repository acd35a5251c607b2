"""The scan of everything the stand-in received (received.py) finds a marker wherever a call
carries it: not only in `text`, but in a button's value, a chart's labels and numbers, an
ephemeral message, a Home tab, a file's bytes, and an earlier version of an updated message;
and it tells each piece's audience apart."""

from __future__ import annotations

from slack_sdk import WebClient

from tests.support.received import Audience, in_threads, leaks, mark, received
from tests.support.standin import SlackStandin

ALICE, BOB = "U0ALICE01", "U0BOB0001"
MARKERS = {"alice": [r"marmotville", r"5,?928,?374"], "bob": [r"quokkaland"], "": [r"narwhal"]}


def client(standin: SlackStandin) -> WebClient:
    return WebClient(token="xoxb-test", base_url=standin.url)


def section(text: str) -> dict[str, object]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def test_a_marker_anywhere_in_a_call_is_found(standin: SlackStandin) -> None:
    slack = client(standin)
    audiences = {"alice": Audience(frozenset({ALICE}), frozenset({("C1", "100.1")}))}
    # a button's value, in Alice's thread: hers
    button = {"type": "button", "text": {"type": "plain_text", "text": "Go"}}
    slack.chat_postMessage(
        channel="C1",
        thread_ts="100.1",
        text="ok",
        blocks=[
            section("ok"),
            {"type": "actions", "elements": [{**button, "value": "Marmotville"}]},
        ],
    )
    assert leaks(received(standin), audiences, MARKERS) == []
    since = mark(standin)
    # the same in another thread, and a chart's data, and a Home tab, and a file's bytes
    slack.chat_postMessage(
        channel="C1",
        thread_ts="200.1",
        text="ok",
        blocks=[
            section("ok"),
            {"type": "actions", "elements": [{**button, "value": "Marmotville"}]},
        ],
    )
    pie = {"type": "pie", "segments": [{"label": "x", "value": 5928374}]}
    slack.chat_postEphemeral(
        channel="C1",
        user=BOB,
        text="ok",
        blocks=[{"type": "data_visualization", "title": "t", "chart": pie}],
    )
    slack.views_publish(user_id=BOB, view={"type": "home", "blocks": [section("Marmotville")]})
    slack.files_upload_v2(
        channel="C1", thread_ts="200.1", filename="result.csv", content="region\nmarmotville\n"
    )
    found = leaks(received(standin, since), audiences, MARKERS)
    assert [(to.split()[0], owner) for to, owner, _, _ in found] == [
        ("chat.postMessage", "alice"),
        ("chat.postEphemeral", "alice"),
        ("views.publish", "alice"),
        ("upload", "alice"),
    ]


def test_an_earlier_version_of_an_updated_message_counts(standin: SlackStandin) -> None:
    slack = client(standin)
    posted = slack.chat_postMessage(channel="C1", thread_ts="100.1", text="Narwhalia")
    slack.chat_update(channel="C1", ts=posted["ts"], text="nothing")
    found = leaks(received(standin), {}, MARKERS)
    assert [(to.split()[0], owner) for to, owner, _, _ in found] == [("chat.postMessage", "nobody")]
    # an update is in the thread of the message it changes
    slack.chat_update(channel="C1", ts=posted["ts"], text="Quokkaland")
    bobs = {"bob": Audience(frozenset({BOB}), frozenset({("C1", "100.1")}))}
    assert [f[1] for f in leaks(received(standin), bobs, MARKERS)] == ["nobody"]
    assert [p.method for p in in_threads(received(standin), "C1")] == [
        "chat.postMessage",
        "chat.update",
        "chat.update",
    ]
