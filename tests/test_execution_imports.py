"""The execution layer imports downwards only: never the tournament, the gate, the CLI or ratings."""

from __future__ import annotations

import ast
from pathlib import Path

import skyjo_ref.execution

PACKAGE = Path(skyjo_ref.execution.__file__).parent
#: What the execution layer must never import (it sits below them, and knows nothing of ratings).
FORBIDDEN = ("skyjo_ref.tournament", "skyjo_ref.gate", "skyjo_ref.cli", "skyjo_ref.report")
RATINGS = ("elo", "sprt", "tables", "rating")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (absolute names; relative imports resolved against the package)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = "skyjo_ref.execution".rsplit(".", node.level - 1)[0]
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
