"""The `bqemulator` BigQuery emulator, in its own virtualenv, as a local REST endpoint.

It pins an older sqlglot than the project, so it lives in a cached venv outside the repository
(built once with uv, about 3 s) and runs as a subprocess on free ports.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

#: What the emulator's venv holds; changing it rebuilds the venv. duckdb and its spatial
#: extension are pinned together (the extension cannot be downloaded here), numpy is needed
#: on its query path, and bqemulator is pinned so the gold figures stay comparable.
REQUIREMENTS = (
    "bqemulator==1.4.0",
    "duckdb==1.5.5",
    "duckdb-extension-spatial==1.5.5",
    "numpy",
)

_INSTALL_SPATIAL = (
    "import duckdb, pathlib, duckdb_extension_spatial as m; "
    "p = next(pathlib.Path(m.__file__).parent.glob('extensions/*/spatial.duckdb_extension')); "
    "duckdb.connect().execute(f\"INSTALL '{p}'\")"
)


class EmulatorError(RuntimeError):
    """The emulator could not be installed or started."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "querybot-test"


def ensure_venv(venv: Path) -> Path:
    """The emulator's `bqemulator` executable, building the venv unless it is up to date."""
    marker = venv / "querybot-requirements.txt"
    wanted = "\n".join(REQUIREMENTS)
    executable = venv / "bin" / "bqemulator"
    if executable.exists() and marker.exists() and marker.read_text() == wanted:
        return executable
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    _run(["uv", "venv", "--quiet", "--clear", "--python", python, str(venv)])
    _run(
        ["uv", "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *REQUIREMENTS]
    )
    # Installed into ~/.duckdb, or start-up fails trying to download it.
    _run([str(venv / "bin" / "python"), "-c", _INSTALL_SPATIAL])
    marker.write_text(wanted)
    return executable


class Emulator:
    """One running emulator process; `url` is its REST endpoint."""

    def __init__(self, executable: Path, log_path: Path, project: str) -> None:
        rest, grpc = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{rest}"
        self.project = project
        self.log_path = log_path
        self._log = log_path.open("wb")
        command = [str(executable), "start", "--rest-port", str(rest), "--grpc-port", str(grpc)]
        self._process = subprocess.Popen(
            [*command, "--project", project, "--log-level", "warning"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout_s: float = 60) -> None:
        """Poll `/readyz` until the emulator answers; fail with its log if it dies."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise EmulatorError(f"bqemulator exited at start-up:\n{self._tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        raise EmulatorError(f"bqemulator was not ready after {timeout_s:g} s:\n{self._tail()}")

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._log.close()

    def _tail(self) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])


def _run(command: list[str]) -> None:
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:
        raise EmulatorError(f"{command[0]} is not installed: {exc}") from exc
    except subprocess.CalledProcessError as exc:
        raise EmulatorError(f"{' '.join(command[:3])} failed:\n{exc.stderr[-2000:]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise EmulatorError(f"{' '.join(command[:3])} took over {exc.timeout:g} s") from exc


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
