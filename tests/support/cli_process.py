"""`querybot` in a process of its own, as a person or a script runs it from a terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The command line a child runs: `querybot ARGV` without the installed script.
CODE = "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"


def demo_env(data_dir: Path, *, leave_out: tuple[str, ...] = (), **settings: str) -> dict[str, str]:
    """This process's environment for a `querybot` on the demo warehouse in `data_dir`, with no
    deployment config (nor the variables named in `leave_out`), and `settings` on top
    (`QUERYBOT_MODEL="scripted:..."`)."""
    dropped = {"QUERYBOT_CONFIG", *leave_out}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    return {**env, "QUERYBOT_WAREHOUSE": "demo", "QUERYBOT_DATA_DIR": str(data_dir), **settings}


def run_querybot(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    input: str | None = None,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """`querybot ARGV` run to its end in `cwd` with exactly `env`; `input` typed at its
    standard input (else `stdin`: closed by default). Five minutes guard against a hung child."""
    return subprocess.run(
        [sys.executable, "-c", CODE, *argv],
        cwd=cwd,
        env=env,
        input=input,
        stdin=None if input is not None else stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
