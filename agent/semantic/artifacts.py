"""Where a dbt project's artifacts are, and reading them again when they change.

QUERYBOT_DBT_PROJECT names a project directory (one holding dbt_project.yml: querybot runs `dbt
parse` there at start, then reads its `target/`), a `target/` directory, or its `manifest.json`
(read as they are: no dbt needed). `manifest.json` is required (dbt writes it on `dbt parse`,
`compile`, `run`, `build`); `semantic_manifest.json` beside it is read when there (dbt writes it too
when the project has a semantic layer), and so is `catalog.json` (`dbt docs generate`: the
warehouse's comments and row counts). Table names in them are those dbt wrote for the profile it ran
with: parse against the warehouse querybot asks.

`ProjectArtifacts.current()` checks the files' modification times and sizes on each call and reads
them again only when they changed (a later `dbt parse`, `build` or `docs generate`); when a new
version cannot be read (dbt writing it at that moment), the last good one is kept and the failure
logged.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent.catalog.documentation import Documentation, JoinKey
from agent.catalog.profiling import table_key
from agent.semantic.dbt_catalog import add_catalog
from agent.semantic.dbt_manifest import read_manifest
from agent.semantic.dbt_parse import DbtParseError, is_project, parse_project
from agent.semantic.semantic_manifest import SemanticLayer, read_semantic_manifest

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
SEMANTIC_MANIFEST = "semantic_manifest.json"
CATALOG = "catalog.json"

#: A file's (modification time in ns, size), or None when it is missing.
_Stamp = tuple[int, int] | None


class DbtProjectError(ValueError):
    """The project's artifacts cannot be found or read; the message says what to do."""


@dataclass(frozen=True)
class Artifacts:
    """One reading of a project's artifacts."""

    target: Path
    documentation: Documentation
    #: None when the project has no semantic layer (no semantic_manifest.json, or no metrics).
    semantic: SemanticLayer | None = None
    #: semantic_manifest.json as read, for MetricFlow (`MetricCompiler`).
    semantic_json: str = ""


def find_target(path: Path) -> Path:
    """The directory holding the project's manifest.json, after `dbt parse` when `path` is a
    project directory (see the module docstring)."""
    path = Path(path)
    if path.is_dir() and is_project(path):
        try:
            path = parse_project(path)
        except DbtParseError as exc:
            raise DbtProjectError(str(exc)) from exc
    candidates = [path.parent] if path.name == MANIFEST else [path, path / "target"]
    for candidate in candidates:
        if (candidate / MANIFEST).is_file():
            return candidate
    raise DbtProjectError(
        f"No {MANIFEST} in {path}"
        + ("" if path.name == MANIFEST else f" nor {path / 'target'}")
        + ": run `dbt parse` in the dbt project (with the profile of this warehouse), then name "
        "the project directory or its target/ directory."
    )


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DbtProjectError(f"Cannot read {path}: {exc}") from exc


def _merge_joins(*groups: tuple[JoinKey, ...]) -> tuple[JoinKey, ...]:
    """Join keys without repeats (a relationships test and an entity often say the same)."""
    seen: dict[tuple[str, str, str, str], JoinKey] = {}
    for join in (j for group in groups for j in group):
        key = (table_key(join.table), join.column.lower(), table_key(join.other), join.other_column)
        seen.setdefault(key, join)
    return tuple(seen.values())


def read_artifacts(target: Path) -> Artifacts:
    """Read the artifacts in `target` (a directory holding manifest.json)."""
    manifest = _load_json(target / MANIFEST)
    if not isinstance(manifest, dict) or "nodes" not in manifest:
        raise DbtProjectError(f"{target / MANIFEST} is not a dbt manifest (it has no nodes).")
    project = (manifest.get("metadata") or {}).get("project_name") or target.parent.name
    documentation = read_manifest(manifest, source=f"dbt project {project}")
    if (target / CATALOG).is_file():
        catalog = _load_json(target / CATALOG)
        if isinstance(catalog, dict):
            documentation = add_catalog(documentation, catalog)
    semantic_path = target / SEMANTIC_MANIFEST
    if not semantic_path.is_file():
        return Artifacts(target, documentation)
    text = semantic_path.read_text(encoding="utf-8")
    try:
        semantic = read_semantic_manifest(json.loads(text), manifest)
    except (ValueError, AttributeError, TypeError) as exc:
        raise DbtProjectError(f"Cannot read {semantic_path}: {exc}") from exc
    joins = _merge_joins(documentation.joins, semantic.joins())
    documentation = replace(documentation, joins=joins)
    return Artifacts(target, documentation, semantic if semantic.metrics else None, text)


class ProjectArtifacts:
    """A project's artifacts, read again when their files change (thread-safe)."""

    def __init__(self, path: Path | str) -> None:
        self.target = find_target(Path(path))
        self._lock = threading.Lock()
        self._stamp: tuple[_Stamp, ...] | None = None
        self._current: Artifacts | None = None
        self.current()  # a project that cannot be read is an error at start, not later

    def _stamps(self) -> tuple[_Stamp, ...]:
        def stamp(path: Path) -> _Stamp:
            try:
                stat = path.stat()
            except OSError:
                return None
            return stat.st_mtime_ns, stat.st_size

        return tuple(stamp(self.target / name) for name in (MANIFEST, SEMANTIC_MANIFEST, CATALOG))

    def current(self) -> Artifacts:
        """The artifacts as the files now are; raises DbtProjectError only when they were
        never read."""
        stamp = self._stamps()
        with self._lock:
            if self._current is not None and stamp == self._stamp:
                return self._current
            try:
                self._current = read_artifacts(self.target)
                self._stamp = stamp
            except DbtProjectError:
                if self._current is None:
                    raise
                log.warning("dbt artifacts in %s changed but cannot be read", self.target)
            return self._current

    def documentation(self) -> Documentation:
        return self.current().documentation
