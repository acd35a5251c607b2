"""The fake clock (tests/support/clock.py) through real child processes: a child started with
`clock.env()` reads the set time, sees `set` and `advance` while it runs, still sleeps and
waits real seconds, and hands the fake time on to the processes it starts.

Without libfaketime (or a C compiler) these skip, and fail under CI=true (tests/support/needs.py).
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.support import clock as clock_module
from tests.support.clock import FakeClock

LONDON = ZoneInfo("Europe/London")
#: 08:59:50 in London on the day the UK moves to BST (01:00 UTC): still GMT, UTC+0.
START = datetime(2027, 3, 28, 0, 59, 50, tzinfo=UTC)

#: Prints the wall clock (UTC, seconds since the epoch) each time a line arrives on stdin.
ECHO_TIME = """
import sys, time
for _ in sys.stdin:
    print(repr(time.time()), flush=True)
"""


@pytest.fixture
def clock(tmp_path: Path) -> FakeClock:
    clock_module.require()
    return FakeClock(tmp_path / "faketime.rc", START)


def child_output(clock: FakeClock, code: str) -> list[str]:
    """What a `python -c code` child under `clock` prints, word by word."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=clock.env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.split()


def child_now(clock: FakeClock, code: str = "import time; print(repr(time.time()))") -> float:
    return float(child_output(clock, code)[-1])


class TimeReader:
    """A running child that reports its time when asked."""

    def __init__(self, clock: FakeClock) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", ECHO_TIME],
            env=clock.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def now(self) -> datetime:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return datetime.fromtimestamp(float(self.process.stdout.readline()), UTC)

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait(timeout=10)


#: A running process reads the clock's file again within about two seconds
#: (FAKETIME_CACHE_DURATION=1).
SEEN_WITHIN_S = 2.5


def near(seen: datetime, expected: datetime, slack: float = 5.0) -> bool:
    return abs((seen - expected).total_seconds()) <= slack


def test_a_child_sees_the_set_time_ticking_on(clock: FakeClock) -> None:
    seen = datetime.fromtimestamp(child_now(clock), UTC)
    assert near(seen, START), seen
    assert seen >= START
    assert near(clock.now(), seen)


def test_a_running_child_sees_set_and_advance(clock: FakeClock) -> None:
    reader = TimeReader(clock)
    try:
        first = reader.now()
        assert near(first, START), first
        clock.advance(3600)
        time.sleep(SEEN_WITHIN_S)
        after_advance = reader.now()
        assert near(after_advance, START + timedelta(hours=1)), after_advance
        # 02:59:50 UTC is 03:59:50 in London, on BST since 01:00 UTC.
        assert after_advance.astimezone(LONDON).utcoffset() == timedelta(hours=1)
        later = datetime(2027, 3, 28, 7, 59, 50, tzinfo=UTC)
        clock.set(later)
        time.sleep(SEEN_WITHIN_S)
        assert near(reader.now(), later)
        clock.set(START)  # backwards too
        time.sleep(SEEN_WITHIN_S)
        assert near(reader.now(), START)
    finally:
        reader.close()


def test_zoned_and_naive_local_time_follow_the_fake_clock(clock: FakeClock) -> None:
    code = (
        "from datetime import datetime; from zoneinfo import ZoneInfo; "
        "print(datetime.now(ZoneInfo('Europe/London')).isoformat(), datetime.now().isoformat())"
    )
    env = clock.env() | {"TZ": "Europe/London"}
    clock.set(datetime(2027, 3, 28, 8, 59, 50, tzinfo=LONDON))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    zoned, naive = datetime.fromisoformat(out[0]), datetime.fromisoformat(out[1])
    assert zoned.utcoffset() == timedelta(hours=1)
    assert near(zoned, datetime(2027, 3, 28, 7, 59, 50, tzinfo=UTC))
    assert near(naive.replace(tzinfo=LONDON), zoned)


def test_sleeps_and_waits_take_real_seconds(clock: FakeClock) -> None:
    code = (
        "import threading, time\n"
        "m = time.monotonic(); w = time.time(); time.sleep(0.5); threading.Event().wait(0.5)\n"
        "print(time.monotonic() - m, time.time() - w)\n"
    )
    started = time.monotonic()
    monotonic, wall = map(float, child_output(clock, code))
    assert 0.95 <= monotonic < 3, monotonic
    assert 0.95 <= wall < 3, wall
    assert time.monotonic() - started < 20


def test_processes_the_child_starts_share_its_clock(clock: FakeClock) -> None:
    code = (
        "import subprocess, sys\n"
        "print(subprocess.run([sys.executable, '-c', 'import time; print(repr(time.time()))'],"
        " capture_output=True, text=True, check=True).stdout)\n"
    )
    clock.advance(86400)
    seen = datetime.fromtimestamp(child_now(clock, code), UTC)
    assert near(seen, START + timedelta(days=1)), seen


def test_set_needs_a_timezone(clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="timezone"):
        clock.set(datetime(2027, 3, 28, 9, 0))
