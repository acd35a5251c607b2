"""The `bqemulator` BigQuery emulator, in its own virtualenv (tests/support/side_venv.py, about 3 s
to build), as a local REST endpoint.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support import side_venv
from tests.support.side_venv import EmulatorError

#: What the emulator's venv holds; changing it rebuilds the venv. duckdb and its spatial
#: extension are pinned together (the extension cannot be downloaded here), numpy is needed
#: on its query path, and bqemulator is pinned so the gold figures stay comparable.
REQUIREMENTS = (
    "bqemulator==1.4.0",
    "duckdb==1.5.5",
    "duckdb-extension-spatial==1.5.5",
    "numpy",
)

#: Installed into ~/.duckdb, or start-up fails trying to download it.
_INSTALL_SPATIAL = (
    "import duckdb, pathlib, duckdb_extension_spatial as m; "
    "p = next(pathlib.Path(m.__file__).parent.glob('extensions/*/spatial.duckdb_extension')); "
    "duckdb.connect().execute(f\"INSTALL '{p}'\")"
)


def ensure_venv(venv: Path) -> Path:
    """The emulator's `bqemulator` executable, building the venv unless it is up to date."""
    return side_venv.ensure_venv(venv, REQUIREMENTS, "bqemulator", then=_INSTALL_SPATIAL)


class Emulator(side_venv.StandInProcess):
    """One running emulator process; `url` is its REST endpoint."""

    def __init__(self, executable: Path, log_path: Path, project: str) -> None:
        rest, grpc = side_venv.free_port(), side_venv.free_port()
        self.url = f"http://127.0.0.1:{rest}"
        self.project = project
        command = [str(executable), "start", "--rest-port", str(rest), "--grpc-port", str(grpc)]
        super().__init__([*command, "--project", project, "--log-level", "warning"], log_path)

    def wait_ready(self, timeout_s: float = 60) -> None:
        """Poll `/readyz` until the emulator answers; fail with its log if it dies."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.exited():
                raise EmulatorError(f"bqemulator exited at start-up:\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        raise EmulatorError(f"bqemulator was not ready after {timeout_s:g} s:\n{self.tail()}")
