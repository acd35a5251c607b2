"""bot.conversations.progress.Progress: shows the elapsed time while its block runs, never after,
and a failing update never breaks the job."""

from __future__ import annotations

import threading

from bot.conversations.progress import Progress


def test_shows_while_running_and_stops_on_exit() -> None:
    calls: list[int] = []
    twice = threading.Event()

    def show(elapsed_s: int) -> None:
        calls.append(elapsed_s)
        if len(calls) == 2:
            twice.set()

    with Progress(show, first_s=0.01, longest_s=0.02) as progress:
        assert twice.wait(10)
    seen = len(calls)
    assert progress.shown and seen >= 2
    assert all(isinstance(s, int) and s >= 0 for s in calls)
    assert not progress._thread.is_alive()
    assert len(calls) == seen, "no update after the block ended"


def test_a_quick_step_shows_nothing() -> None:
    calls: list[int] = []
    with Progress(calls.append, first_s=60) as progress:
        pass
    assert calls == [] and not progress.shown


def test_a_failing_update_is_logged_and_ticking_goes_on() -> None:
    attempts = threading.Semaphore(0)

    def show(elapsed_s: int) -> None:
        attempts.release()
        raise RuntimeError("Slack said no")

    with Progress(show, first_s=0.01, longest_s=0.01) as progress:
        assert attempts.acquire(timeout=10) and attempts.acquire(timeout=10)
    assert not progress.shown
