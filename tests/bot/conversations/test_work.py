"""bot.conversations.work: jobs of one thread run one after another, different threads in
parallel."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from bot.conversations.work import Work


@pytest.fixture
def work() -> Iterator[Work]:
    pool = Work(workers=4)
    yield pool
    pool.shutdown()


def test_jobs_with_one_key_run_in_order_one_at_a_time(work: Work) -> None:
    started = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def first() -> None:
        started.set()
        release.wait(10)
        order.append("first")

    work.submit("thread", first)
    work.submit("thread", lambda: order.append("second"))
    work.submit("thread", lambda: order.append("third"))
    assert started.wait(10)
    # first() holds the key: the later jobs cannot have started.
    assert order == []
    release.set()
    assert work.wait_idle(10)
    assert order == ["first", "second", "third"]


def test_jobs_with_different_keys_run_in_parallel(work: Work) -> None:
    a_waiting = threading.Event()
    b_done = threading.Event()

    def a() -> None:
        a_waiting.set()
        assert b_done.wait(10), "b never ran while a was waiting"

    work.submit("thread-a", a)
    assert a_waiting.wait(10)
    work.submit("thread-b", b_done.set)
    assert b_done.wait(10)
    assert work.wait_idle(10)


def test_a_failing_job_does_not_stop_the_next(work: Work, caplog: pytest.LogCaptureFixture) -> None:
    ran = threading.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="bot.conversations.work"):
        work.submit("thread", boom)
        work.submit("thread", ran.set)
        assert ran.wait(10)
        assert work.wait_idle(10)
    assert "boom" in caplog.text


def test_wait_idle_times_out_while_a_job_runs(work: Work) -> None:
    release = threading.Event()
    work.submit("thread", lambda: release.wait(10))
    assert not work.wait_idle(0.05)
    release.set()
    assert work.wait_idle(10)


def test_a_key_can_be_reused_after_it_drained(work: Work) -> None:
    seen: list[int] = []
    for i in range(3):
        work.submit("thread", lambda i=i: seen.append(i))
        assert work.wait_idle(10)
    assert seen == [0, 1, 2]
