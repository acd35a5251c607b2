"""fakesnow's Snowflake stand-in, in its own virtualenv, as a local server the real driver talks to.

fakesnow pins an older sqlglot (30.22) and duckdb than the project's, so, like the BigQuery
emulator, it lives in a cached venv outside the repository (tests/support/side_venv.py; built once
with uv, a few seconds) and runs as a subprocess (`fakesnow -s`) on a free port. The project's own
`snowflake-connector-python` (the `snowflake` extra) is the client.
"""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

from tests.support import side_venv
from tests.support.side_venv import EmulatorError

#: What the server's venv holds; changing it rebuilds the venv. fakesnow 0.12.1 cannot import
#: snowflake-connector-python 5.x (notes: shared/notes/semantic-layer-and-snowflake.md).
REQUIREMENTS = ("fakesnow[server]==0.12.1", "snowflake-connector-python==4.8.1")


def ensure_venv(venv: Path) -> Path:
    """The venv's `fakesnow` executable, building the venv unless it is up to date."""
    return side_venv.ensure_venv(venv, REQUIREMENTS, "fakesnow")


class FakesnowServer(side_venv.StandInProcess):
    """One running `fakesnow -s`; `endpoint` is its URL (SNOWFLAKE_ENDPOINT)."""

    stop_signal = signal.SIGINT  # what `fakesnow -s` waits for

    def __init__(self, executable: Path, log_path: Path) -> None:
        self.port = side_venv.free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        command = [str(executable), "-s", "-p", str(self.port), "--host", "127.0.0.1"]
        super().__init__(command, log_path)

    def connect_kwargs(self) -> dict[str, object]:
        """What `snowflake.connector.connect` needs to reach the server (it takes any login)."""
        return {
            "user": "fake",
            "password": "snow",
            "account": "fakesnow",
            "host": "127.0.0.1",
            "port": self.port,
            "protocol": "http",
            "session_parameters": {"CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED": False},
            "network_timeout": 10,
        }

    def wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.exited():
                raise EmulatorError(f"fakesnow exited at start-up:\n{self.tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise EmulatorError(f"fakesnow was not ready after {timeout_s:g} s:\n{self.tail()}")
