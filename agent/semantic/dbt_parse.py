"""`dbt parse` on a dbt project directory, so that the artifacts querybot reads are those of the
project's files as they are now, not of whenever someone last ran dbt.

dbt runs in the project directory (a `profiles.yml` there is found, DBT_PROFILES_DIR and
DBT_TARGET are honoured) and writes its `target/` there; it is bounded in time and its own error
is kept for the message. `dbt parse` reads the project and its profile but runs nothing on the
warehouse. dbt is looked for beside the running Python (the `dbt` extra installs it there), then
on PATH. Usage statistics and the version check are off unless the environment says otherwise.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

log = logging.getLogger(__name__)

PROJECT_FILE = "dbt_project.yml"
#: How long `dbt parse` may take (about 5 s for a small project on 2 cores).
PARSE_TIMEOUT_S = 120.0
#: Lines of dbt's output a failure keeps.
_OUTPUT_LINES = 12
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class DbtParseError(ValueError):
    """dbt is missing, failed or took too long; the message says what to do."""


def is_project(path: Path) -> bool:
    """Whether `path` is a dbt project directory (it holds dbt_project.yml)."""
    return (path / PROJECT_FILE).is_file()


def find_dbt() -> Path | None:
    """The dbt executable: beside the running Python, else on PATH; None when there is none."""
    beside = Path(sys.executable).with_name("dbt")
    if beside.is_file():
        return beside
    found = shutil.which("dbt")
    return Path(found) if found else None


def _tail(output: str) -> str:
    lines = [line.rstrip() for line in _ANSI.sub("", output).splitlines() if line.strip()]
    return "\n".join(lines[-_OUTPUT_LINES:])


def parse_project(
    project: Path, *, dbt: Path | None = None, timeout_s: float = PARSE_TIMEOUT_S
) -> Path:
    """Run `dbt parse` in `project` and return the directory it wrote the artifacts to."""
    dbt = dbt or find_dbt()
    if dbt is None or not dbt.is_file():
        raise DbtParseError(
            f"{project} is a dbt project, and reading it takes `dbt parse`, but dbt is not "
            "installed here: install querybot[dbt] (or dbt with your warehouse's adapter), or "
            "run `dbt parse` yourself and name the project's target/ directory instead."
        )
    target = project.resolve() / "target"
    env = {
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_VERSION_CHECK": "false",
        **os.environ,
    }
    command = [
        str(dbt), "parse", "--project-dir", str(project.resolve()), "--target-path", str(target),
        "--no-use-colors", "--log-format", "text", "--quiet",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired as exc:
        raise DbtParseError(
            f"`dbt parse` in {project} did not finish in {timeout_s:g} s and was stopped: run it "
            "yourself to see why, then name the project's target/ directory."
        ) from exc
    except OSError as exc:
        raise DbtParseError(f"Cannot run {dbt}: {exc}") from exc
    if done.returncode != 0:
        said = _tail(done.stdout + "\n" + done.stderr) or f"exit status {done.returncode}"
        raise DbtParseError(
            f"`dbt parse` failed in {project}; mend the project (or its profile) and start "
            f"again. dbt said:\n{said}"
        )
    log.info("Ran `dbt parse` in %s: artifacts in %s", project, target)
    return target
