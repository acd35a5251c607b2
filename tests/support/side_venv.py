"""Stand-ins pinned apart from the project, each in a virtualenv of its own: the BigQuery emulator
(tests/support/bigquery_emulator.py) and fakesnow (tests/support/snowflake_server.py) pin an older
sqlglot than the project's, so each lives in a cached venv outside the repository, built once
with uv and rebuilt only when its requirements change, and runs as a subprocess on free ports.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TypeVar

from tests.support.needs import unavailable


class EmulatorError(RuntimeError):
    """A stand-in could not be installed or started."""


class Server(Protocol):
    """A stand-in's running process."""

    def wait_ready(self) -> None: ...

    def stop(self) -> None: ...


S = TypeVar("S", bound=Server)


class StandInProcess:
    """A stand-in's process, its output kept in `log_path`; a subclass adds `wait_ready`."""

    #: What the stand-in stops on (then it is killed after 10 s).
    stop_signal = signal.SIGTERM

    def __init__(self, command: list[str], log_path: Path) -> None:
        self.log_path = log_path
        self._log = log_path.open("wb")
        self._process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)

    def exited(self) -> bool:
        return self._process.poll() is not None

    def stop(self) -> None:
        self._process.send_signal(self.stop_signal)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._log.close()

    def tail(self) -> str:
        """The last lines it wrote, for an error saying why it did not start."""
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "querybot-test"


def ensure_venv(
    venv: Path, requirements: Sequence[str], executable: str, *, then: str = ""
) -> Path:
    """The venv's `executable`, building the venv with `requirements` (then running the Python
    code `then` in it) unless its marker says they are what it holds."""
    marker = venv / "querybot-requirements.txt"
    wanted = "\n".join(requirements)
    path = venv / "bin" / executable
    if path.exists() and marker.exists() and marker.read_text() == wanted:
        return path
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    interpreter = str(venv / "bin" / "python")
    run(["uv", "venv", "--quiet", "--clear", "--python", python, str(venv)])
    run(["uv", "pip", "install", "--quiet", "--python", interpreter, *requirements])
    if then:
        run([interpreter, "-c", then])
    marker.write_text(wanted)
    return path


@contextmanager
def serving(start: Callable[[], S], what: str) -> Iterator[S]:
    """The server `start()` launches, once ready, stopped afterwards. When it cannot be
    installed or started, the test asking for it is skipped, or fails under CI
    (tests/support/needs.py)."""
    try:
        running = start()
    except EmulatorError as exc:
        unavailable(f"{what} cannot be installed: {exc}")
    try:
        running.wait_ready()
    except EmulatorError as exc:
        running.stop()
        unavailable(f"{what} did not start: {exc}")
    try:
        yield running
    finally:
        running.stop()


def run(command: list[str]) -> None:
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:
        raise EmulatorError(f"{command[0]} is not installed: {exc}") from exc
    except subprocess.CalledProcessError as exc:
        raise EmulatorError(f"{' '.join(command[:3])} failed:\n{exc.stderr[-2000:]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise EmulatorError(f"{' '.join(command[:3])} took over {exc.timeout:g} s") from exc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
