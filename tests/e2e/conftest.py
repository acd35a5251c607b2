"""Fixtures for the end-to-end tests, which start the real bot process: the Web API stand-in and
the prebuilt demo warehouse. Every test here is marked slow, once, by this file.

End-to-end modules define their own `bot` (a BotProcess with that module's script and
settings), or get one from a module-scoped `bots` (a SharedBot, see shared_bot.py), from which
the `bot` here gives each test a process holding its own replies. The `bots` here serves a module
on the demo warehouse: it names its tests' replies in `REPLIES` and may add settings in `BOT_ENV`;
a module on another warehouse defines its own `bots`. They mark themselves
`pytestmark = pytest.mark.usefixtures("checked")`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.shared_bot import SharedBot
from tests.support.botproc import BotProcess, data_dir_with
from tests.support.standin import SlackStandin

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    """One Web API stand-in per end-to-end module, shared with that module's bot process."""
    with SlackStandin() as slack:
        yield slack


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin,
    demo_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[SharedBot]:
    """The shared bot of a module on the demo warehouse, with the module's `REPLIES` and its
    `BOT_ENV` settings, if any (over botproc's: the demo warehouse, the scripted model)."""
    module = request.module
    assert hasattr(module, "REPLIES"), f"{module.__name__} names no REPLIES for its shared bot"
    env = dict(getattr(module, "BOT_ENV", {}))

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir = data_dir_with(data_dir, demo_file)
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    tmp = tmp_path_factory.mktemp(module.__name__.rpartition(".")[2].removeprefix("test_"))
    with SharedBot(module.REPLIES, start, tmp) as shared:
        yield shared


@pytest.fixture
def bot(bots: SharedBot, request: pytest.FixtureRequest) -> BotProcess:
    """The module's shared bot process, with this test's replies next in its script."""
    return bots.for_test(request)


@pytest.fixture
def checked(standin: SlackStandin, bot: BotProcess) -> Iterator[None]:
    """After each end-to-end test: the tail of the bot's log (pytest shows it when the test
    failed), and a failure if the bot sent anything Slack would refuse."""
    yield
    print(bot.log()[-5000:])
    standin.assert_clean()
