"""Loading an upload in a child process under hard limits, so the worst file costs a bounded
amount and the bot stays up.

The deterministic bounds (`SandboxLimits`) refuse what can be seen coming; this holds the loader to
what cannot: the child (`python -m connectors.sandbox.child`, a fresh interpreter, never a fork of
the threaded bot) sets its own operating-system limits before it reads the file:

- RLIMIT_AS: its address space may grow by `memory_bytes` past what the interpreter and its
  libraries take at start (DuckDB's memory limit is half of that);
- RLIMIT_FSIZE: no file it writes (the database, its WAL, DuckDB's temp files) may pass
  `disk_bytes` (Python ignores SIGXFSZ, so the write fails with EFBIG and DuckDB says so);
- RLIMIT_CPU: a backstop for the wall-clock timeout below;

and the parent kills its process group once `timeout_s` have passed, or once its working
directory holds more than `disk_bytes` (DuckDB's temp files are many, each under RLIMIT_FSIZE,
and DuckDB 2.0 was seen spilling 38 GB past its `max_temp_directory_size` of 1 GB).

The child loads into a copy of the sandbox's database in a staging directory; only a load that
succeeded replaces the database, so a child killed midway leaves the sandbox as it was.

Protocol: the parent writes a JSON spec to the child's stdin; the child prints one JSON line,
`{"tables": [...]}` or `{"rejected": {...}}`, plus its peak memory (`peak_rss_kib`). Whatever
the load raises becomes a refusal saying what is wrong with the file (the bound it hit, or what
the reader said): no file can end in a traceback. `LoaderFailed` is left for a child that
could not even start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from connectors.sandbox import csv_checks as sandbox_csv
from connectors.sandbox import sqlite as sandbox_sqlite
from connectors.sandbox.bounds import (
    SandboxLimits,
    out_of_disk,
    out_of_memory,
    out_of_time,
    unreadable,
)
from connectors.sandbox.files import FileRejected
from connectors.sandbox.load import LoadedTable, load_file

log = logging.getLogger(__name__)

#: Where the project's packages are, for the child's import path.
_ROOT = Path(__file__).resolve().parents[2]
#: Signals a child dies of when an allocation failed under RLIMIT_AS (abort, segfault) or the
#: kernel's out-of-memory killer took it.
#: Seconds between two looks at the child's disk use.
_POLL_S = 0.1
_MEMORY_SIGNALS = {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGKILL}


class LoaderFailed(Exception):
    """The loader process failed in a way that is no bound being hit (see the bot's log)."""


def load_bounded(
    db: Path, file: Path, name: str, kind: str, limits: SandboxLimits, work: Path
) -> list[LoadedTable]:
    """Load `file` into the sandbox database `db` in a bounded child, working in the empty
    directory `work` (on the same disk as `db`); returns the child's LoadedTable records.
    Raises FileRejected (nothing changed) for a file over a bound or unreadable."""
    target = work / db.name
    if db.exists():
        shutil.copyfile(db, target)
    spec = {
        "db": str(target),
        "file": str(file),
        "name": name,
        "kind": kind,
        "temp": str(work / "tmp"),
        "limits": dataclasses.asdict(limits),
    }
    result = _run(spec, limits, name, work)
    if "rejected" in result:
        raise FileRejected(**result["rejected"])
    target.replace(db)
    return [LoadedTable(**t) for t in result["tables"]]


def _run(spec: dict[str, Any], limits: SandboxLimits, name: str, work: Path) -> dict[str, Any]:
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(p for p in (str(_ROOT), os.environ.get("PYTHONPATH")) if p),
        # glibc reserves address space per thread arena; two keep RLIMIT_AS about memory.
        "MALLOC_ARENA_MAX": "2",
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "connectors.sandbox.child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # its own process group, killed as one
    )
    out, err = _watch(child, json.dumps(spec).encode(), limits, name, work)
    lines = out.decode("utf-8", errors="replace").strip().splitlines()
    if child.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = err.decode("utf-8", errors="replace")[-2000:]
    if child.returncode == -signal.SIGXCPU:
        raise out_of_time(name, limits)
    if -child.returncode in _MEMORY_SIGNALS:
        log.warning("The loader of %s died of signal %s: %s", name, -child.returncode, tail)
        raise out_of_memory(name, limits)
    raise LoaderFailed(f"The loader of {name} exited with {child.returncode}: {tail}")


def _watch(
    child: subprocess.Popen[bytes], spec: bytes, limits: SandboxLimits, name: str, work: Path
) -> tuple[bytes, bytes]:
    """The child's output once it ends; killed (its process group) when `timeout_s` have
    passed or `work` (the database copy and DuckDB's temp files) holds more than
    `disk_bytes`: RLIMIT_FSIZE bounds each file, and DuckDB 2.0 spills past its own
    `max_temp_directory_size` into many."""
    deadline = time.monotonic() + limits.timeout_s
    given: bytes | None = spec
    while True:
        try:
            return child.communicate(given, timeout=_POLL_S)
        except subprocess.TimeoutExpired:
            given = None  # communicate keeps writing what it was given first
            full = _disk_bytes(work) > limits.disk_bytes
            if full or time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.communicate()
                raise (out_of_disk if full else out_of_time)(name, limits) from None


def _disk_bytes(root: Path) -> int:
    """Bytes on disk of the files under `root` (they come and go while it looks)."""
    total = 0
    for directory, _dirs, files in os.walk(root):
        for file in files:
            with contextlib.suppress(OSError):
                total += (Path(directory) / file).stat().st_blocks * 512
    return total


def _set_limits(limits: SandboxLimits) -> None:
    """The child's own limits, set before it opens the file (see the module docstring)."""
    with open("/proc/self/statm") as f:  # its first field: pages of address space in use
        in_use = int(f.read().split()[0]) * resource.getpagesize()
    memory = in_use + limits.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.disk_bytes, limits.disk_bytes))
    cpu = math.ceil(limits.timeout_s) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def main() -> None:
    spec = json.loads(sys.stdin.read())
    limits = SandboxLimits(**spec["limits"])
    name = spec["name"]
    Path(spec["temp"]).mkdir(exist_ok=True)
    if spec["kind"] == "sqlite":
        sandbox_sqlite.import_libraries()
    _set_limits(limits)
    sandbox_csv.hold_fields_to(limits)
    try:
        tables = load_file(
            Path(spec["db"]), Path(spec["file"]), name, spec["kind"], limits, Path(spec["temp"])
        )
        result: dict[str, Any] = {"tables": [dataclasses.asdict(t) for t in tables]}
    except Exception as exc:  # every file's failure: the refusal it gets (see above)
        paths = (spec["file"], spec["db"], spec["temp"])
        result = {"rejected": _rejected(unreadable(name, spec["kind"], exc, limits, paths))}
    result["peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(result), flush=True)


def _rejected(exc: FileRejected) -> dict[str, str]:
    return {
        "message": exc.message,
        "hint": exc.hint,
        "engine_message": exc.engine_message,
        "bound": exc.bound,
    }


if __name__ == "__main__":
    main()
