"""The loader's child process, started for every upload, imports only what loading needs: not the
settings (pydantic), and numpy only for a SQLite file's rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.connectors.sandbox.sandbox_uploads import FILES, make_sqlite

ROOT = Path(__file__).resolve().parents[3]
#: What loading a CSV needs none of.
HEAVY = ("pydantic", "pydantic_settings", "numpy", "pandas", "pyarrow")
#: The child's own entry point, then which of the heavy packages it imported.
CHILD = """
import json, sys
from connectors.sandbox.child import main
main()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[1]))))
"""


def child_imports(tmp_path: Path, file: Path, kind: str) -> tuple[dict, list[str]]:
    """What the child answered for loading `file`, and the heavy packages it imported."""
    spec = {
        "db": str(tmp_path / "files.duckdb"),
        "file": str(file),
        "name": file.name,
        "kind": kind,
        "temp": str(tmp_path / "tmp"),
        "limits": {},
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(HEAVY)],
        input=json.dumps(spec),
        cwd=ROOT,  # `-c` puts it on the import path, as the loader's PYTHONPATH does
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer, imported = done.stdout.splitlines()[-2:]
    return json.loads(answer), json.loads(imported)


def test_loading_a_csv_imports_neither_settings_nor_numpy(tmp_path: Path) -> None:
    answer, imported = child_imports(tmp_path, FILES / "sales.csv", "csv")
    assert [t["name"] for t in answer["tables"]] == ["sales"]
    assert imported == []


@pytest.mark.slow
def test_loading_a_sqlite_file_imports_numpy_for_its_rows_only(tmp_path: Path) -> None:
    answer, imported = child_imports(tmp_path, make_sqlite(tmp_path / "shop.sqlite"), "sqlite")
    assert sorted(t["name"] for t in answer["tables"]) == ["customers", "orders"]
    assert {m.split(".")[0] for m in imported} == {"numpy"}
