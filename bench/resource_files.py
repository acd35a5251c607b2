"""Hostile files shared in a thread (issue 15, item 6): what loading each costs the bot and what
stopped it, as rows of the gate report's resource section (bench/resources.py).

    uv run python -m bench.resource_files

The files are the issue's, at its sizes (tests/support/hostile_files.py): a 30 kB CSV of 4,000
columns, a 3 MB SQLite file whose `ADD COLUMN ... DEFAULT` of 1 MB covers 200,000 rows, a SQLite
generated column computing a 1 MB `printf` on each of 200,000 rows, and a 1.4 kB Parquet file
whose dictionary expands to 40 GB (bench/fixtures/dictionary_bomb.parquet, written once by
`hostile_files.parquet_dictionary`, which takes DuckDB about 30 s).

Each file is loaded with the bot's default settings
(`bot.files.sandboxes.sandbox_limits(Settings())`) by `Sandboxes.load`, in a fresh process of its
own (`--one`), as the bot would: the peak RSS of that process and of the loader child (`ru_maxrss`
of RUSAGE_SELF and RUSAGE_CHILDREN), and the temp bytes the most the sandboxes directory (the
sandbox, its staging copy and DuckDB's temp files) held while it ran, sampled every 10 ms. Each file
is then loaded again with the size bounds off (`--hard-only`), to show what the loader process's
hard limits (memory, time, disk) do alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench.resources import ResourceRow, table
from bot.files.sandboxes import sandbox_limits
from bot.files.uploads import BOUND_SETTINGS
from bot.settings import Settings
from connectors.sandbox.files import FileRejected
from connectors.sandbox.sandboxes import Sandboxes
from tests.support import hostile_files

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MIB = 1024 * 1024
#: Issue 36's file: ragged rows, one holding a 300 kB field (once `_csv.Error` with a traceback).
RAGGED = "ragged CSV with a 300 kB field"
#: Files refused as malformed (a clear refusal, no bound involved).
MALFORMED = (RAGGED,)
#: attack name -> (engine, how the file is made in a folder)
ATTACKS = {
    "CSV of 4,000 columns (30 kB)": (
        "DuckDB loader",
        lambda d: hostile_files.wide_csv(d / "wide.csv"),
    ),
    "SQLite ADD COLUMN DEFAULT 1 MB over 200k rows (3 MB)": (
        "SQLite -> DuckDB loader",
        lambda d: hostile_files.sqlite_default(d / "default.sqlite"),
    ),
    "SQLite generated column, printf 1 MB per row, 200k rows": (
        "SQLite -> DuckDB loader",
        lambda d: hostile_files.sqlite_generated(d / "generated.sqlite"),
    ),
    "Parquet dictionary expanding to 40 GB (1.4 kB)": (
        "DuckDB loader",
        lambda d: FIXTURES / "dictionary_bomb.parquet",
    ),
    RAGGED: ("DuckDB loader", lambda d: _write(d / "ragged.csv", _ragged_csv())),
    "CSV with one 2 MB field": (
        "DuckDB loader",
        lambda d: _write(d / "long.csv", "a,b\n1," + "x" * 2_000_000 + "\n"),
    ),
}


#: The size bounds as loose as settings allow (each at its highest accepted value, far above
#: every file here): what the loader process's hard limits (memory, time, disk) do alone.
SIZE_BOUNDS = ("file_max_columns", "file_max_cells", "file_max_expanded_mb")


def _highest(name: str) -> float:
    """The highest value the setting `name` accepts (its `le` bound)."""
    bounds = [getattr(m, "le", None) for m in Settings.model_fields[name].metadata]
    return min(b for b in bounds if b is not None)


HARD_ONLY = {name: _highest(name) for name in SIZE_BOUNDS}


def resource_rows() -> list[ResourceRow]:
    """One row per hostile file, each loaded in a fresh process with the default settings, then
    again with the size bounds (columns, cells, expanded bytes) off."""
    return [_row(name, hard_only) for hard_only in (False, True) for name in ATTACKS]


def _row(name: str, hard_only: bool) -> ResourceRow:
    label = f"{name}, size bounds off" if hard_only else name
    done = subprocess.run(
        [sys.executable, "-m", "bench.resource_files", "--one", name]
        + (["--hard-only"] if hard_only else []),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return ResourceRow(label, ATTACKS[name][0], 0, 0, f"bench failed: {done.stderr}", False)
    found = json.loads(lines[-1])
    return ResourceRow(
        label,
        ATTACKS[name][0],
        found["peak_rss_mib"],
        found["temp_mib"],
        found["stopped_by"],
        found["ok"],
        children_mib=found["child_mib"],
    )


def _one(name: str, settings: Settings) -> dict[str, object]:
    """Load the attack's file in this process, as the bot does, and measure it."""
    with tempfile.TemporaryDirectory(prefix="querybot-resource-files-") as tmp:
        folder = Path(tmp)
        file = ATTACKS[name][1](folder)
        root = folder / "sandboxes"
        sandboxes = Sandboxes(root, sandbox_limits(settings))
        peak_disk = [0]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.01):
                peak_disk[0] = max(peak_disk[0], _disk_bytes(root))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            sandboxes.load("bench", file, file.name)
            stopped_by, ok = "nothing: it loaded", False
        except FileRejected as exc:
            setting = BOUND_SETTINGS.get(exc.bound, ("no setting", ""))[0]
            stopped_by = f"{exc.bound} ({setting}): {exc.message}" if exc.bound else exc.message
            ok = bool(exc.bound) or name in MALFORMED
        finally:
            stop.set()
            sampler.join()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "peak_rss_mib": own / 1024,
        "child_mib": child / 1024,
        "temp_mib": peak_disk[0] / MIB,
        "stopped_by": stopped_by.replace("|", "/"),
        "ok": ok,
    }


def _ragged_csv() -> str:
    return "a,b\n1,2\n3," + "x" * 300_000 + ",4\n5,6\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _disk_bytes(root: Path) -> int:
    """Bytes on disk of every file under `root` (files vanish while it walks)."""
    total = 0
    for directory, _dirs, names in os.walk(root):
        for file in names:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(directory, file)).st_blocks * 512
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", help="load one attack's file in this process (JSON result)")
    parser.add_argument("--hard-only", action="store_true", help="with the size bounds off")
    args = parser.parse_args()
    if args.one:
        settings = Settings(**HARD_ONLY) if args.hard_only else Settings()  # type: ignore[arg-type]
        print(json.dumps(_one(args.one, settings)))
        return
    print("\n".join(table(resource_rows())))


if __name__ == "__main__":
    main()
