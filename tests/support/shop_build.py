"""Building the shop dbt project (tests/support/shop) with dbt-duckdb into a directory: seeds
loaded, models built, its data tests run, its artifacts and catalog written. Used by
tests/conftest.py and by the Slack end-to-end test of governed answers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.needs import unavailable

SHOP = Path(__file__).parent / "shop"


@dataclass(frozen=True)
class BuiltProject:
    #: The copy of the project dbt ran in.
    root: Path
    #: Its target/ folder, with manifest.json, semantic_manifest.json and catalog.json.
    target: Path
    #: The DuckDB file dbt built (its catalog is named "shop", after the file).
    database: Path


def run_dbt(root: Path, database: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dbt ARGS` in `root`, offline and without usage statistics; fails the test on an error."""
    dbt = Path(sys.executable).with_name("dbt")
    if not dbt.exists():
        unavailable("dbt is not installed (`uv sync` installs it with the dev group)")
    env = {
        **os.environ,
        "SHOP_DUCKDB_PATH": str(database),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_VERSION_CHECK": "false",
    }
    command = [str(dbt), *args, "--project-dir", str(root), "--profiles-dir", str(root)]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return done


def copy_shop(folder: Path) -> Path:
    """The project's files copied into `folder` (nothing dbt wrote)."""
    root = folder / "shop"
    shutil.copytree(SHOP, root, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb*"))
    return root


def build_shop(folder: Path) -> BuiltProject:
    """Copy the project into `folder`, `dbt build` it there and `dbt docs generate` its
    catalog.json (about 12 s)."""
    root = copy_shop(folder)
    database = root / "shop.duckdb"
    run_dbt(root, database, "build")
    run_dbt(root, database, "docs", "generate")
    return BuiltProject(root=root, target=root / "target", database=database)
