"""Check a Python bot file before any process starts: it compiles, and it defines the class it is named by.

Nothing of the file runs here (it is compiled and its top level read, never
executed), so a broken bot is one clean message (``file:line: SyntaxError:
...``) at the command line or config check, the same in ``match``, ``play``
and ``tournament``, instead of a bot process that exits or keeps crashing.
"""

from __future__ import annotations

import ast
from pathlib import Path

from skyjo_ref.errors import BotSpecError


class BotFileError(BotSpecError):
    """A bot file that cannot be loaded; the message says where and what is expected."""


def syntax_error_text(exc: SyntaxError, fallback: str = "<bot>") -> str:
    """``file:line: SyntaxError: message``, one line, as compilers print it."""
    where = exc.filename or fallback
    line = f":{exc.lineno}" if exc.lineno else ""
    return f"{where}{line}: {type(exc).__name__}: {exc.msg}"


def _top_level_names(tree: ast.Module) -> tuple[set[str], bool]:
    """Names the module may bind at its top level (in any branch), and whether it may bind others we cannot see."""
    names: set[str] = set()
    open_ended = False

    def visit(body: list[ast.stmt]) -> None:
        nonlocal open_ended
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        open_ended = True
                    else:
                        names.add((alias.asname or alias.name).split(".")[0])
            else:  # if/try/with/for/while/match blocks: what any branch binds
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        visit([child])
                    elif isinstance(child, ast.ExceptHandler | ast.match_case):
                        visit(child.body)
                    elif isinstance(child, ast.expr) and any(isinstance(n, ast.NamedExpr) for n in ast.walk(child)):
                        names.update(n.target.id for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
                if isinstance(node, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith):
                    for n in ast.walk(node.target if isinstance(node, ast.For | ast.AsyncFor) else node):
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                            names.add(n.id)

    visit(tree.body)
    return names, open_ended or "__getattr__" in names or "globals" in _called(tree)


def _called(tree: ast.Module) -> set[str]:
    """Names of functions called anywhere (``globals()`` can bind any name)."""
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def check_bot_file(path: Path, name: str | None = None) -> None:
    """Raise :class:`BotFileError` when ``path`` does not compile or (statically) lacks ``name``."""
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise BotFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        tree = ast.parse(source, str(path))
        compile(tree, str(path), "exec", dont_inherit=True)  # what the parser lets through: return outside def, ...
    except SyntaxError as exc:
        raise BotFileError(syntax_error_text(exc, str(path))) from None
    except ValueError as exc:  # null bytes
        raise BotFileError(f"{path}: cannot be compiled: {exc}") from None
    if name is None:
        return
    names, open_ended = _top_level_names(tree)
    if name not in names and not open_ended:
        classes = sorted(n.name for n in tree.body if isinstance(n, ast.ClassDef))
        found = ", ".join(classes) or "none"
        raise BotFileError(
            f"{path} defines no {name!r} (classes defined there: {found}): expected path/bot.py:ClassName"
        )
