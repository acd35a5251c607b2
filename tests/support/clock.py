"""A wall clock a test can set and move for a real subprocess, through Debian's libfaketime.

Scheduled questions (a post at 09:00 local time, a daylight-saving change, the runs missed while
the bot was down) can only be tested end to end if the bot process (`querybot run`, started by
`tests/support/botproc.py`) believes it is some other time. Mocking Python's clock would test
the mock; libfaketime (Debian package `faketime`) fakes the C library's wall clock under an
unchanged process instead, so `time.time()`, `datetime.now(...)` and every library reading the
clock (DBOS's scheduler, the databases' clients) see the fake time, and so do the worker
processes the bot starts, since they inherit its environment.

`FakeClock(path, start)` writes libfaketime's timestamp file; a process started with
`clock.env()` sees `start`, ticking on at the real rate from there, and `clock.set(when)` or
`clock.advance(seconds)` move it while the process runs (the file is read again once a second:
`FAKETIME_CACHE_DURATION=1`; read on every call, a clock read took 4.5 µs, twelve times the
cached one, and a bot busy starting on a loaded machine took a minute longer). The file holds an
offset from the real clock (`+12345.678901`), not a start date (`@2027-03-28 00:59:50`): a start
date is counted from the moment each process reads it, so the bot and a worker it starts later
would disagree.

Only the wall clock is faked (`FAKETIME_DONT_FAKE_MONOTONIC=1`): timeouts, `time.sleep` and
`threading.Event().wait` take real seconds, so a test neither hangs nor spins. A faked monotonic
clock would hang every `Event.wait(timeout)`: glibc's `sem_clockwait` compares a faked deadline
with the kernel's real clock. Real monotonic time meets a bug of libfaketime 0.9.10 instead
(`time.sleep` raises EINVAL under Python 3.11); `faketime_sleep.c`, compiled once with `cc` and
preloaded ahead of libfaketime, sends the monotonic clock's sleeps straight to the kernel.

A move is seen by the next reading of the clock, not by a wait already begun: a thread in
`Event.wait(timeout)` still wakes after its real seconds, and DBOS's scheduler (3.4.0) sleeps
from one run to the next in one such wait, computed when the schedule's thread starts (at
launch, or when the schedule is created or changed). So set the clock shortly before the run to
test (08:59:50 for a 09:00 schedule) before that thread starts; for missed runs, stop the bot,
move the clock, start it again. For `BotProcess(env=...)`, which keeps the test's environment
but its Slack and querybot settings, pass `clock.env({})`: the clock's variables alone.
In HTTP mode the bot checks each request's signed timestamp against its own (fake) clock:
sign with `signed_headers(..., timestamp=int(clock.now().timestamp()))`, or a request stamped
with the real time is refused (401, "timestamp is too old"); Socket Mode requests are unsigned.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from tests.support.needs import unavailable

#: Where Debian's package puts the library (`dpkg -L libfaketime`), for any architecture.
LIBRARY_GLOBS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)
SLEEP_FIX = Path(__file__).with_name("faketime_sleep.c")


def library() -> Path | None:
    """libfaketime's shared library, or None when the `faketime` package is not installed."""
    for pattern in LIBRARY_GLOBS:
        for found in sorted(glob.glob(pattern)):
            return Path(found)
    return None


def sleep_fix() -> Path | None:
    """`faketime_sleep.c` compiled (once per version of its source), or None without `cc`."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    source = SLEEP_FIX.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    built = Path(tempfile.gettempdir()) / f"querybot-faketime-sleep-{os.getuid()}-{digest}.so"
    if built.exists():
        return built
    # Test workers may build it at once: each into its own file, then one atomic rename.
    partial = built.with_name(f"{built.name}.{os.getpid()}")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-o", str(partial), str(SLEEP_FIX), "-ldl"],
        check=True,
        capture_output=True,
    )
    os.replace(partial, built)
    return built


def missing() -> str | None:
    """Why a fake clock cannot be had here, or None when it can."""
    if library() is None:
        return "libfaketime is not installed (apt-get install faketime)"
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        return "no C compiler (cc) to build tests/support/faketime_sleep.c"
    return None


def require() -> None:
    """Skip the calling test without libfaketime (fail instead under CI=true)."""
    reason = missing()
    if reason is not None:
        unavailable(reason)


class FakeClock:
    """The wall clock of the processes started with `env()`: `start` at first, then ticking,
    moved by `set` and `advance` while they run. The test's own clock stays real."""

    def __init__(self, path: Path, start: datetime) -> None:
        lib = library()
        if lib is None:
            raise RuntimeError("libfaketime is not installed (apt-get install faketime)")
        fix = sleep_fix()
        if fix is None:
            raise RuntimeError("no C compiler (cc) to build tests/support/faketime_sleep.c")
        self.path = path
        self.preload = [str(fix), str(lib)]
        self.offset = 0.0
        # Before any process starts: without the file libfaketime would use the real time.
        self.set(start)

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) plus what puts a child on this clock."""
        env = dict(os.environ if base is None else base)
        preload = [*self.preload, *env.get("LD_PRELOAD", "").split()]
        env.update(
            {
                "LD_PRELOAD": " ".join(dict.fromkeys(preload)),
                "FAKETIME_TIMESTAMP_FILE": str(self.path),
                # Read the file again about once a second, so a running process sees a move
                # within about two seconds.
                "FAKETIME_CACHE_DURATION": "1",
                # Sleeps and timeouts in real seconds.
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                # Files keep their real times: the test and the bytecode caches agree on them.
                "NO_FAKE_STAT": "1",
            }
        )
        env.pop("FAKETIME", None)  # libfaketime would use it instead of the file
        return env

    def set(self, when: datetime) -> None:
        """Make it `when` (a timezone-aware datetime) now, for the processes on this clock."""
        if when.tzinfo is None:
            raise ValueError(f"{when!r} has no timezone: say which 09:00 is meant")
        self._write(when.timestamp() - time.time())

    def advance(self, seconds: float) -> None:
        """Move the clock `seconds` forward (backward if negative)."""
        self._write(self.offset + seconds)

    def now(self) -> datetime:
        """What time the processes on this clock read now, in UTC."""
        return datetime.fromtimestamp(time.time() + self.offset, UTC)

    def _write(self, offset: float) -> None:
        # A process reading a half-written file would see a wrong offset, or none (the real
        # time): write it aside, then rename it into place.
        partial = self.path.with_name(f"{self.path.name}.partial")
        partial.write_text(f"{offset:+.6f}\n", encoding="ascii")
        os.replace(partial, self.path)
        self.offset = offset
