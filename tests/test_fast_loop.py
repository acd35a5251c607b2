"""The fast loop (`uv run pytest -m "not slow"`, README) covers every source module: each module
of agent/, bot/ and connectors/ is imported, directly or through the modules it imports, by a
test module that keeps at least one test under `-m "not slow"`.

The imports are read from the source (every `import` statement, also those inside functions),
from the test modules pytest collects for the fast loop; imports made only by a process a test
starts do not count.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "bot", "connectors")


def fast_test_files() -> set[Path]:
    """The test modules that keep a test under `-m "not slow"`."""
    command = ["pytest", "--collect-only", "-q", "-m", "not slow", "-p", "no:cacheprovider"]
    found = subprocess.run(
        [sys.executable, "-m", *command, "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stdout[-3000:] + found.stderr[-3000:]
    return {ROOT / line.split("::")[0] for line in found.stdout.splitlines() if "::" in line}


def imported_names(path: Path) -> set[str]:
    """Every module name an import statement of `path` may load (`from a import b` may load
    `a.b`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def module_files(name: str) -> list[Path]:
    """The files importing `name` runs: its packages' __init__.py files and its own file."""
    parts = name.split(".")
    files = [ROOT.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts) + 1)]
    files.append(ROOT.joinpath(*parts).with_suffix(".py"))
    return [f for f in files if f.is_file()]


def reached(start: Iterable[Path]) -> set[Path]:
    """The files `start` imports, transitively (within this repository)."""
    seen: set[Path] = set()
    todo = list(start)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imported_names(path):
            todo += [f for f in module_files(name) if f not in seen]
    return seen


def source_modules() -> set[Path]:
    return {p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def test_the_import_reader_follows_packages_and_function_level_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from connectors.demo import build\n", encoding="utf-8")
    got = reached([probe])
    assert ROOT / "connectors" / "demo" / "build.py" in got
    assert ROOT / "connectors" / "demo" / "__init__.py" in got
    assert ROOT / "connectors" / "__init__.py" in got
    assert ROOT / "bot" / "cli.py" not in got


@pytest.mark.slow  # it collects the whole suite in a subprocess
def test_every_source_module_is_imported_by_a_fast_test() -> None:
    files = fast_test_files()
    assert len(files) > 50, sorted(files)
    missing = sorted(str(p.relative_to(ROOT)) for p in source_modules() - reached(files))
    assert missing == [], f"not imported by any test the fast loop runs: {missing}"
