"""`querybot run` when Slack cannot be used, as a real process against the stand-ins: every way
the start can fail (Slack unreachable, a token refused, the app-level token refused in Socket
Mode, its WebSocket unreachable, rate limited, Slack failing, no signing secret in HTTP mode),
and every way the HTTP server can fail to listen (its port in use, a low port without the
privilege, a port number out of range), ends the process with a non-zero code and one last line
that says what happened and what to do, never a traceback."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.support.botproc import QUERYBOT, data_dir_with, free_port, write_script
from tests.support.demo_day import TODAY
from tests.support.socket_standin import SocketModeStandin
from tests.support.standin import SlackStandin

BOT_FIX = "copy the Bot User OAuth Token (xoxb-...) from your Slack app > OAuth & Permissions"
APP_FIX = "create an App-Level Token with the connections:write scope"
NETWORK_FIX = "check this machine's network connection, proxy and firewall"


@pytest.fixture
def slack() -> Iterator[SlackStandin]:
    """The Web API stand-in, without conftest's check that nothing was refused: refusals are
    what these tests are about."""
    with SlackStandin() as standin:
        yield standin


@pytest.fixture
def socket_mode(slack: SlackStandin) -> Iterator[SocketModeStandin]:
    with SocketModeStandin() as standin:
        slack.socket_mode_url = standin.url
        yield standin


@pytest.fixture
def data_dir(tmp_path: Path, demo_file: Path) -> Path:
    return data_dir_with(tmp_path / "data", demo_file)


def start(
    data_dir: Path,
    *,
    http: bool = False,
    port: int | None = None,
    launcher: Sequence[str] = (),
    **env: str,
) -> tuple[int, str]:
    """`querybot run` (`--http --port PORT` when `http`, a free port unless given) with the Slack
    settings in `env`, started through `launcher` (a command that runs the rest); returns its
    exit code and what it wrote, once it has ended by itself."""
    script = write_script(data_dir / "script.jsonl", [])
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "QUERYBOT_"))}
    settings = {
        "PYTHONUNBUFFERED": "1",
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(data_dir),
        "QUERYBOT_WAREHOUSE": "demo",
        # the day the data directory's demo was built for: another would build it again first
        "QUERYBOT_TODAY": TODAY.isoformat(),
        **env,
    }
    port = free_port() if port is None else port
    args = [*launcher, str(QUERYBOT), "run", *(["--http", "--port", str(port)] if http else [])]
    done = subprocess.run(
        args,
        env={**keep, **settings},
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout


def last_line(output: str) -> str:
    """The line the process ended with; the output holds no traceback."""
    assert "Traceback" not in output, output
    return output.strip().splitlines()[-1]


def test_a_refused_bot_token_is_one_line(slack: SlackStandin, data_dir: Path) -> None:
    slack.refuse_token("xoxb-revoked")
    code, output = start(
        data_dir, SLACK_BOT_TOKEN="xoxb-revoked", SLACK_APP_TOKEN="xapp-ok", SLACK_API_URL=slack.url
    )
    assert code != 0, output
    assert last_line(output) == (
        f"querybot cannot start: Slack refused SLACK_BOT_TOKEN (invalid_auth): {BOT_FIX} into "
        "SLACK_BOT_TOKEN (reinstall the app to the workspace if it was removed)."
    )
    assert [c.method for c in slack.calls] == ["auth.test"]


def test_an_unreachable_slack_is_one_line(data_dir: Path) -> None:
    port = free_port()  # nothing listens there
    code, output = start(
        data_dir,
        SLACK_BOT_TOKEN="xoxb-ok",
        SLACK_APP_TOKEN="xapp-ok",
        SLACK_API_URL=f"http://127.0.0.1:{port}/api",
    )
    assert code != 0, output
    assert last_line(output) == (
        f"querybot cannot start: Slack cannot be reached at http://127.0.0.1:{port}/api/ "
        f"(ConnectionRefusedError: [Errno 111] Connection refused): {NETWORK_FIX} (and "
        "SLACK_API_URL if you set it), then try again."
    )


def test_a_rate_limited_start_is_one_line(slack: SlackStandin, data_dir: Path) -> None:
    slack.rate_limit("auth.test", retry_after=1, times=3)  # the first call and both retries
    code, output = start(
        data_dir, SLACK_BOT_TOKEN="xoxb-ok", SLACK_APP_TOKEN="xapp-ok", SLACK_API_URL=slack.url
    )
    assert code != 0, output
    assert last_line(output) == (
        "querybot cannot start: Slack is rate-limiting auth.test (it asks to wait 1 s before "
        "trying again): wait that long, then try again."
    )
    assert len(slack.calls_to("auth.test")) == 3


def test_a_failing_slack_is_one_line(slack: SlackStandin, data_dir: Path) -> None:
    slack.server_error("auth.test", status=503, times=3)
    code, output = start(
        data_dir, SLACK_BOT_TOKEN="xoxb-ok", SLACK_APP_TOKEN="xapp-ok", SLACK_API_URL=slack.url
    )
    assert code != 0, output
    assert last_line(output) == (
        "querybot cannot start: Slack answered auth.test with fatal_error (HTTP 503): Slack is "
        "having trouble; see https://slack-status.com and try again in a few minutes."
    )


@pytest.mark.parametrize(
    ("app_token", "error"),
    [("xapp-revoked", "invalid_auth"), ("xoxb-ok", "not_allowed_token_type")],
)
def test_a_refused_app_token_in_socket_mode_is_one_line(
    slack: SlackStandin,
    socket_mode: SocketModeStandin,
    data_dir: Path,
    app_token: str,
    error: str,
) -> None:
    """A revoked app-level token, and the bot token pasted where the app-level one goes."""
    slack.refuse_token("xapp-revoked")
    code, output = start(
        data_dir, SLACK_BOT_TOKEN="xoxb-ok", SLACK_APP_TOKEN=app_token, SLACK_API_URL=slack.url
    )
    assert code != 0, output
    assert last_line(output).startswith(
        f"querybot cannot start: Slack refused SLACK_APP_TOKEN ({error}): {APP_FIX} (Slack app "
        "> Basic Information > App-Level Tokens), put it (xapp-...) in SLACK_APP_TOKEN"
    ), output
    assert socket_mode.connections == 0
    assert [c.method for c in slack.calls] == ["auth.test", "apps.connections.open"]


def test_an_unreachable_socket_mode_connection_is_one_line(
    slack: SlackStandin, data_dir: Path
) -> None:
    """Slack hands out a WebSocket URL that cannot be reached (a firewall that lets HTTPS out
    but not the WebSocket): slack_sdk would retry for ever, querybot says so and stops."""
    port = free_port()
    slack.socket_mode_url = f"ws://127.0.0.1:{port}/link"
    code, output = start(
        data_dir, SLACK_BOT_TOKEN="xoxb-ok", SLACK_APP_TOKEN="xapp-ok", SLACK_API_URL=slack.url
    )
    assert code != 0, output
    assert last_line(output) == (
        f"querybot cannot start: the Socket Mode connection to 127.0.0.1:{port} could not be "
        "opened (ConnectionRefusedError: [Errno 111] Connection refused): check that this "
        "machine may open WebSocket (wss://) connections to Slack through its proxy and "
        "firewall, then try again."
    )


@pytest.mark.parametrize("secret", ["", "your-signing-secret-here"])
def test_http_mode_without_a_signing_secret_is_one_line(
    slack: SlackStandin, data_dir: Path, secret: str
) -> None:
    code, output = start(
        data_dir,
        http=True,
        SLACK_BOT_TOKEN="xoxb-ok",
        SLACK_SIGNING_SECRET=secret,
        SLACK_API_URL=slack.url,
    )
    assert code != 0, output
    unset = "still holds a placeholder, not a value" if secret else "is not set"
    assert last_line(output) == (
        f"querybot cannot start: SLACK_SIGNING_SECRET {unset}; set it in .env or the environment, "
        "from Slack app > Basic Information > App Credentials > Signing Secret."
    )
    assert slack.calls == [], "nothing is asked of Slack before the settings are complete"


def http_start(
    slack: SlackStandin, data_dir: Path, port: int, launcher: Sequence[str] = ()
) -> tuple[int, str]:
    """`querybot run --http --port PORT` with a Slack that accepts the bot token."""
    return start(
        data_dir,
        http=True,
        port=port,
        launcher=launcher,
        SLACK_BOT_TOKEN="xoxb-ok",
        SLACK_SIGNING_SECRET="standin-secret",
        SLACK_API_URL=slack.url,
    )


def test_an_http_port_in_use_is_one_line(slack: SlackStandin, data_dir: Path) -> None:
    with socket.socket() as other:  # another process's server, on the port querybot is given
        other.bind(("0.0.0.0", 0))
        other.listen()
        port = other.getsockname()[1]
        code, output = http_start(slack, data_dir, port)
    assert code == 2, output
    assert last_line(output) == (
        f"querybot cannot start: port {port} is already in use by another process (another "
        "querybot?): stop that process, or choose a free port with --port and point your Slack "
        "app's Request URL at it."
    )
    assert "listening" not in output


@pytest.mark.parametrize("port", [70000, -1])
def test_an_http_port_out_of_range_is_one_line(
    slack: SlackStandin, data_dir: Path, port: int
) -> None:
    code, output = http_start(slack, data_dir, port)
    assert code == 2, output
    assert last_line(output) == (
        f"querybot cannot start: --port {port} is not a port number: use one from 1 to 65535."
    )


#: A port below 1024, which only a privileged process may listen on.
LOW_PORT = 81


def without_bind_privilege() -> list[str]:
    """A launcher under which a port below 1024 cannot be taken: none for a user without the
    privilege, setpriv dropping CAP_NET_BIND_SERVICE for root; skips where neither works."""
    floor = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
    if not floor.exists() or int(floor.read_text()) <= LOW_PORT:
        pytest.skip(f"anyone may listen on port {LOW_PORT} here")
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root may listen on any port, and setpriv is not here to drop that")
    return ["setpriv", "--bounding-set=-net_bind_service"]


def test_a_low_http_port_without_the_privilege_is_one_line(
    slack: SlackStandin, data_dir: Path
) -> None:
    code, output = http_start(slack, data_dir, LOW_PORT, launcher=without_bind_privilege())
    assert code == 2, output
    assert last_line(output) == (
        f"querybot cannot start: this process may not listen on port {LOW_PORT} (ports below "
        "1024 need root or the CAP_NET_BIND_SERVICE capability): choose --port 1024 or above "
        f"(the default is 3000), behind a reverse proxy that listens on {LOW_PORT} if Slack must "
        "reach that port."
    )
