"""Function bodies stay under 80 lines (the project's style): no new long function can land unnoticed.

The ones still longer are listed by name; each is a debt to pay, and the list
may only shrink (a listed function that got short fails too, so it is removed).
"""

from __future__ import annotations

import ast
from pathlib import Path

import skyjo_ref

PACKAGE = Path(skyjo_ref.__file__).parent
LIMIT = 80
#: Still longer than LIMIT (path relative to skyjo_ref/, function): none; a function that must stay long (a
#: hot loop measured slower when split) would be listed here, with why.
KNOWN_LONG: set[tuple[str, str]] = set()


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of the body after its docstring."""
    first = node.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(node.body) > 1
    start = node.body[1].lineno if docstring else first.lineno
    return (node.end_lineno or start) - start + 1


def long_functions() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and body_lines(node) > LIMIT:
                found.add((path.relative_to(PACKAGE).as_posix(), node.name))
    return found


def test_no_function_body_grows_past_80_lines() -> None:
    assert long_functions() == KNOWN_LONG
