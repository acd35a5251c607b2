"""Load with faults: the concurrency benchmark's fifty questions at once (fifty threads of one
channel, every model call taking half a second) with about one model call in ten and one query
in ten failing the ways they fail in production:

- model: a rate limit (429) and a timeout that pass (the agent's retry absorbs them and the
  question is answered), a bad key (401), a key without access (403) and an error of a kind
  nobody retries; each of the last three ends its question with the clear message at once;
- warehouse (a real PostgreSQL through the bot's own read-only login, pgwarehouse.py): queries
  stopped by the query timeout, and queries whose connection the server drops mid-run
  (`pg_terminate_backend`, the way an administrator, a failover or a restart drops it).

Every question must end, in its own thread, with an answer or a clear error: none dropped, none
left "Working on it…" or "Running…", none waiting on a button; each query that ran was approved
first and ran once (the audit log); nothing the bot sent to Slack was refused.

The scripted model's replies are taken in the order the calls arrive, so which thread meets
which fault varies from run to run, but how many do does not: the script holds one reply per
question plus one per retried error, and a thread never meets three retried errors in a row
(there are two), so every line is used and each failing line ends exactly one question.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.blocks import APPROVE_ACTION, CANCEL_ACTION
from bot.conversations.outcomes import RUN_FAILED
from tests.e2e.pgwarehouse import Warehouse, shop_warehouse
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import Thread
from tests.support.standin import Posted, SlackStandin

THREADS = 50
#: Seconds per model call (the benchmark's 2 s, shortened to keep CI short).
DELAY_S = 0.5
#: QUERYBOT_QUERY_TIMEOUT_S: long enough for the test to drop a connection before it.
TIMEOUT_S = 6

GOOD = [
    "SELECT COUNT(*) AS n FROM shop.sales",
    "SELECT MIN(s.amount) AS least FROM shop.sales AS s",
    "SELECT MAX(s.amount) AS top FROM shop.sales AS s",
]
#: 2.7e10 rows: stopped by the query timeout.
TIMES_OUT = (
    "SELECT COUNT(*) AS n FROM shop.sales AS a CROSS JOIN shop.sales AS b"
    " CROSS JOIN shop.sales AS c WHERE a.amount + b.amount + c.amount = -1"
)
#: As long, and named by its alias: the test drops its connection while it runs.
DROP_MARK = "dropped_mid_query"
DROPPED = (
    f"SELECT COUNT(*) AS {DROP_MARK} FROM shop.sales AS a CROSS JOIN shop.sales AS b"
    " CROSS JOIN shop.sales AS c WHERE a.amount * b.amount = c.amount - 1"
)


def error(message: str, status: int | str | None, *, delay: float = 0) -> dict[str, object]:
    line: dict[str, object] = {"__error__": message}
    if status is not None:
        line["status"] = status
    if delay:
        line["__delay__"] = delay
    return line


#: Retried by the agent, then answered (at most two such lines: three in a row would fail).
PASSING = [
    error("Resource has been exhausted (e.g. check quota).", 429),
    error("Deadline exceeded", "timeout", delay=DELAY_S),
]
#: Each ends its question with a clear message, at once: (the line, what the thread is told).
PERMANENT = [
    (error("API key not valid. Please pass a valid API key.", 401), "refused querybot's API key"),
    (error("Permission denied on resource project.", 403), "refused querybot's API key"),
    (error("400 Request contains an invalid argument.", None), "The language model did not answer"),
]
#: Queries that fail when run: (the SQL, how many, what the thread is told).
RUN_FAULTS = [
    (TIMES_OUT, 2, f"The query ran longer than {TIMEOUT_S} s"),
    (DROPPED, 3, "The PostgreSQL connection failed"),
]


def script() -> list[dict[str, object]]:
    """One reply per question plus one per retried error; the faults spread through it."""
    faults: list[dict[str, object]] = [*PASSING, *(line for line, _ in PERMANENT)]
    queries = [sql for sql, count, _ in RUN_FAULTS for _ in range(count)]
    total = THREADS + len(PASSING)
    lines: list[dict[str, object]] = []
    for i in range(total):
        if i % 10 == 4 and faults:
            lines.append(faults.pop(0))
        elif i % 10 == 9 and queries:
            lines.append({**sql_reply(queries.pop(0)), "__delay__": DELAY_S})
        else:
            lines.append({**sql_reply(GOOD[i % len(GOOD)]), "__delay__": DELAY_S})
    assert not faults and not queries
    return lines


def at_once(jobs: list[Callable[[], object]]) -> None:
    """Run every job on its own thread, all released together, and wait for them."""
    start = threading.Barrier(len(jobs))
    errors: list[BaseException] = []

    def run(job: Callable[[], object]) -> None:
        start.wait()
        try:
            job()
        except BaseException as exc:  # re-raised in the test's thread below
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors


class Dropper:
    """Drops, from the server side, the connection of every run of DROPPED, once it runs."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse
        self.dropped: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            for pid in self.warehouse.running(DROP_MARK):
                if pid not in self.dropped and self.warehouse.terminate(pid):
                    self.dropped.add(pid)

    def __enter__(self) -> Dropper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def is_answer(m: Posted) -> bool:
    return "Sources:" in m.all_text()


def is_model_failure(m: Posted) -> bool:
    return ":warning:" in m.all_text() and "The language model" in m.all_text()


def is_run_failure(m: Posted) -> bool:
    return ":warning:" in m.all_text() and "The query" in m.all_text()


#: How a thread can end.
KINDS: dict[str, Callable[[Posted], bool]] = {
    "answer": is_answer,
    "model": is_model_failure,
    "run": is_run_failure,
}


def waiting(m: Posted) -> bool:
    """Buttons for a decision or a cancel, or a placeholder still spinning."""
    actions = m.action_values()
    return APPROVE_ACTION in actions or CANCEL_ACTION in actions or "hourglass" in m.all_text()


def settled(
    slack: SlackStandin, threads: list[Thread], done: Callable[[Posted], bool], what: str
) -> dict[Thread, list[Posted]]:
    """Each thread's messages once every thread shows a message for which `done` holds."""

    def check() -> dict[Thread, list[Posted]] | None:
        found = {t: slack.thread(t.channel, t.ts) for t in threads}
        return found if all(any(done(m) for m in ms) for ms in found.values()) else None

    return slack.wait_for(check, timeout=180, what=what)


@pytest.fixture(scope="module")
def warehouse() -> Iterator[Warehouse]:
    with shop_warehouse("loadfaults") as wh:
        yield wh


@pytest.mark.timeout(420)
def test_fifty_questions_under_model_and_warehouse_faults_each_end_in_an_answer_or_a_clear_error(
    slack: SlackStandin, warehouse: Warehouse, demo_file: Path, tmp_path: Path
) -> None:
    env = {
        "QUERYBOT_WAREHOUSE": warehouse.url,
        "QUERYBOT_QUERY_TIMEOUT_S": str(TIMEOUT_S),
        "QUERYBOT_PROFILE_VALUES": "off",
    }
    model = write_script(tmp_path / "script.jsonl", script())
    data = data_dir_with(tmp_path / "data", demo_file)
    channel = payloads.new_channel()
    threads: list[Thread] = []
    lock = threading.Lock()

    with BotProcess(slack=slack, data_dir=data, script=model, env=env) as bot:

        def ask(i: int) -> None:
            thread = flow.ask(bot, f"question {i}: what do the sales look like?", channel=channel)
            with lock:
                threads.append(thread)

        at_once([lambda i=i: ask(i) for i in range(THREADS)])  # each ack is checked (200)
        assert len(threads) == THREADS

        def proposed_or_failed(m: Posted) -> bool:
            return APPROVE_ACTION in m.action_values() or is_model_failure(m)

        asked = settled(slack, threads, proposed_or_failed, "a proposal or an error everywhere")
        proposals = [m for ms in asked.values() for m in ms if APPROVE_ACTION in m.action_values()]
        assert len(proposals) == THREADS - len(PERMANENT)

        with Dropper(warehouse) as dropper:
            at_once([lambda p=p: flow.click(bot, p, approve=True) for p in proposals])
            final = settled(
                slack,
                threads,
                lambda m: is_answer(m) or is_model_failure(m) or is_run_failure(m),
                "an answer or an error in every thread",
            )
        # The script is used up: the two retried errors each took one more reply.
        extra = flow.ask(bot, "one more on sales?", channel=channel)
        flow.wait_message(slack, extra, flow.has_text("ran out of replies"), "the exhausted script")
        audit = audit_events(bot)
        print(bot.log()[-5000:])  # shown when the test failed

    endings = {
        t: [kind for kind, check in KINDS.items() if any(check(m) for m in ms)]
        for t, ms in final.items()
    }
    # Nothing dropped: each thread ends in exactly one way, and nothing is left waiting.
    assert all(len(kinds) == 1 for kinds in endings.values()), endings
    assert not [m for ms in final.values() for m in ms if waiting(m)]

    def told(kind: str, text: str) -> int:
        return sum(
            1
            for t, ms in final.items()
            if endings[t] == [kind] and any(text in m.all_text() for m in ms)
        )

    # The model's faults: the passing ones were absorbed, each permanent one told once.
    for text in {text for _, text in PERMANENT}:
        assert told("model", text) == sum(1 for _, t in PERMANENT if t == text), text
    assert sum(kinds == ["model"] for kinds in endings.values()) == len(PERMANENT)
    # The warehouse's faults: each told as what it was, and the card says the run failed.
    for _, count, text in RUN_FAULTS:
        assert told("run", text) == count, text
    assert len(dropper.dropped) == sum(c for sql, c, _ in RUN_FAULTS if sql == DROPPED)
    run_failed = sum(c for _, c, _ in RUN_FAULTS)
    cards = [m for ms in final.values() for m in ms if RUN_FAILED in m.all_text()]
    assert len(cards) == run_failed
    answered = THREADS - len(PERMANENT) - run_failed
    assert sum(kinds == ["answer"] for kinds in endings.values()) == answered

    # Each approved query ran once, and only after its recorded approval.
    by_proposal: dict[str, list[str]] = {}
    for event in audit:
        if event["proposal_id"]:
            by_proposal.setdefault(event["proposal_id"], []).append(event["event"])
    ran = [events for events in by_proposal.values() if "approved" in events]
    assert len(by_proposal) == len(ran) == len(proposals)
    assert sum(e == ["proposed", "approved", "executed"] for e in ran) == answered
    assert sum(e == ["proposed", "approved", "execution_failed"] for e in ran) == run_failed
