"""One bot process for an end-to-end module, with each test's own model replies.

Starting `querybot run` costs seconds, so an end-to-end module shares one process among its
tests. The scripted model answers a process's model calls in the order of its script, which would
tie each test to the tests before it. So a module names each test's replies instead (`REPLIES`:
test name -> its replies, in file order; a parametrized test by its name with or without the
brackets) and gets its bot from `SharedBot.for_test` (the `bot` fixture of tests/e2e/conftest.py
does that when the module defines a `bots` fixture).

The process starts with the replies of every test from the current one on, in file order. While
the tests run in file order and pass, each finds its own replies next in that script, and the
module costs one start. A test that would find other replies next (it runs alone, under -k,
shuffled, or after a failure that may have left replies unread) gets a fresh process, in a fresh
data directory, whose script starts with its own replies; so does any test after one that
stopped the process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.botproc import BotProcess, write_script

#: One scripted model reply: a JSON object, or a raw text.
Reply = dict[str, Any] | str
#: Makes the (not yet started) bot process for a script, in the given fresh data directory.
Start = Callable[[Path, Path], BotProcess]


class SharedBot:
    """A module's bot process, restarted only when a test would not find its replies next."""

    def __init__(self, replies: Mapping[str, Sequence[Reply]], start: Start, tmp: Path) -> None:
        self.replies = {name: list(script) for name, script in replies.items()}
        self._start = start
        self._tmp = tmp
        self._process: BotProcess | None = None
        #: The tests whose replies the running process's script still holds, in order.
        self._pending: list[str] = []
        self._failures = 0
        #: How many processes this module started (one when its tests ran in file order).
        self.starts = 0

    def for_test(self, request: pytest.FixtureRequest) -> BotProcess:
        """The bot for the test of `request`: its model calls get its own replies."""
        if self.starts == 0:
            self._check_names(request.module)
        node = request.node
        name = node.name if node.name in self.replies else node.originalname
        if request.session.testsfailed != self._failures:
            # A test failed since the last one: it may have left replies unread.
            self._failures = request.session.testsfailed
            self._pending = []
        wanted = bool(self.replies.get(name))
        stale = self._process is None or not self._process.running  # a test may stop it
        if stale or (wanted and self._pending[:1] != [name]):
            self._restart(name)
        if wanted:
            self._pending.pop(0)
        assert self._process is not None
        return self._process

    def _check_names(self, module: Any) -> None:
        """A misspelt test name would hand its replies to whichever test runs next."""
        for name in self.replies:
            assert callable(getattr(module, name.partition("[")[0], None)), (
                f"REPLIES names {name!r}, which is no test of {module.__name__}"
            )

    def _restart(self, name: str) -> None:
        self.close()
        names = list(self.replies)
        self._pending = names[names.index(name) :] if name in names else names
        self.starts += 1
        tmp = self._tmp / f"bot-{self.starts}"
        tmp.mkdir(parents=True)
        script = write_script(
            tmp / "script.jsonl", [reply for test in self._pending for reply in self.replies[test]]
        )
        self._process = self._start(script, tmp / "data").start()

    def close(self) -> None:
        if self._process is not None:
            self._process.__exit__(None, None, None)
            self._process = None

    def __enter__(self) -> SharedBot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
