"""Fixtures built once per test run, however many pytest-xdist workers share it.

A session fixture is built once per process, and under `pytest -n N` each worker is a process:
the demo warehouse, the dbt build of the shop and the gate's payload verdicts would be built N
times. `once` builds a value in the directory all workers of a run share, under a file lock; the
first worker builds it and the others read what it left (a pickle of the value, beside it)."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

T = TypeVar("T")


def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary directory of the whole run: the workers' common parent under xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)`'s value, computed by the first worker of the run to ask for `name`, in
    `folder` (empty, the run's own, kept until pytest cleans old runs); the others wait for it."""
    folder = shared_dir(tmp_path_factory) / f"once-{name}"
    built = folder.with_name(f"{folder.name}.pickle")  # beside: the folder holds what build wrote
    with FileLock(f"{folder}.lock"):
        if built.is_file():
            value: T = pickle.loads(built.read_bytes())
            return value
        folder.mkdir(exist_ok=True)
        value = build(folder)
        partial = built.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value))
        partial.replace(built)
        return value
