"""Imports point downwards: the execution layer never imports the tournament, the gate, the CLI or ratings;
the statistics room (skyjo_ref.stats) imports nothing of skyjo_ref at all."""

from __future__ import annotations

import ast
from pathlib import Path

import skyjo_ref.execution
import skyjo_ref.stats

PACKAGE = Path(skyjo_ref.execution.__file__).parent
#: What the execution layer must never import (it sits below them, and knows nothing of ratings).
FORBIDDEN = ("skyjo_ref.tournament", "skyjo_ref.gate", "skyjo_ref.cli", "skyjo_ref.report", "skyjo_ref.stats")
RATINGS = ("elo", "sprt", "tables", "rating")


def imported_modules(path: Path, package: str = "skyjo_ref.execution") -> list[tuple[int, str]]:
    """Every module ``path`` imports (absolute names; relative imports resolved against ``package``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def test_the_execution_package_imports_nothing_above_it() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert {f.name for f in files} >= {"play.py", "backend.py", "executor.py", "dask_backend.py", "types.py"}
    wrong = [
        f"{path.name}:{line}: {name}"
        for path in files
        for line, name in imported_modules(path)
        if name.startswith(FORBIDDEN) or any(part in RATINGS for part in name.split(".")[1:])
    ]
    assert wrong == []


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The walk finds imports inside functions and relative ones (what the real check relies on)."""
    source = tmp_path / "x.py"
    source.write_text(
        "def f():\n    from skyjo_ref.tournament.runner import run\n    from ..gate import spec\n", encoding="utf-8"
    )
    names = [name for _, name in imported_modules(source)]
    assert names == ["skyjo_ref.tournament.runner.run", "skyjo_ref.gate.spec"]


def test_the_statistics_room_imports_nothing_of_skyjo_ref() -> None:
    """Pure functions over numbers: the tournament, the gate and the report read stats, never the reverse."""
    folder = Path(skyjo_ref.stats.__file__).parent
    files = sorted(folder.glob("*.py"))
    assert {f.name for f in files} >= {"sprt.py", "bradley_terry.py"}
    wrong = [
        f"{path.name}:{line}: {name}"
        for path in files
        for line, name in imported_modules(path, "skyjo_ref.stats")
        if name.startswith(("skyjo_ref", "skyjo_bot", "skyjo_proto")) and not name.startswith("skyjo_ref.stats")
    ]
    assert wrong == []
