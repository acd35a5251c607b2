"""End to end in the container's shape: the compose HTTP service's command, run from the image's
file set (built as the Dockerfile builds it, tests/support/container_image.py) as the image's user,
who may write only the data directory, with the stand-in in place of Slack. A question is proposed,
approved and answered, and `docker stop`'s SIGTERM ends the bot with exit code 0.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, expected_rows, sql_reply
from tests.support.container_image import Image, build_image, compose
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"


class ImageBot(BotProcess):
    """`BotProcess` started as the compose service `service` runs in its container."""

    def __init__(self, image: Image, service: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.image = image
        self.args = [str(a) for a in compose()["services"][service]["command"]]

    def start(self, timeout: float = 60) -> ImageBot:
        args = list(self.args)
        args[args.index("--port") + 1] = str(self.port)  # the container's 3000, free here
        # only what .env would hold; the rest is the image's own environment
        dotenv = {k: v for k, v in self._env().items() if k.startswith(("SLACK_", "QUERYBOT_"))}
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                self.image.command(args),
                env=self.image.environ(dotenv),
                cwd=self.image.app,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while not self._ready(0):
            if self._proc.poll() is not None:
                raise AssertionError(f"querybot exited ({self._proc.returncode}):\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"querybot did not get ready in {timeout:g} s:\n{self.log()}")
            time.sleep(0.1)
        return self


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    return build_image(tmp_path_factory.mktemp("container"))


REPLIES = {"test_a_question_is_answered_by_the_http_service_from_the_image": [sql_reply(REGIONS)]}


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, demo_file: Path, image: Image, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    def start(script: Path, _: Path) -> BotProcess:
        """The image's bot: its data directory is the image's, whatever the restart."""
        data_dir = data_dir_with(image.data, demo_file)
        return ImageBot(image, "querybot-http", slack=standin, data_dir=data_dir, script=script)

    with SharedBot(REPLIES, start, tmp_path_factory.mktemp("model")) as shared:
        yield shared


def test_a_question_is_answered_by_the_http_service_from_the_image(
    bot: BotProcess, standin: SlackStandin, image: Image, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many regions are there?")
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    [(count,)] = expected_rows(demo_file, REGIONS)
    assert flow.values(result) == {"Regions": str(count)}
    assert "Sources: `demo.main.regions`" in result.all_text()
    # its state went to the data directory, and nothing was written next to the code
    assert (image.data / "state.sqlite").is_file()
    assert not list(image.app.rglob("__pycache__"))
    assert "Permission denied" not in bot.log()


def test_docker_stop_ends_the_bot_with_exit_code_0(bot: BotProcess) -> None:
    """SIGTERM exits 0, so `restart: on-failure:N` leaves a stopped bot stopped."""
    assert bot.stop() == 0
