"""Check a Python bot file before any process starts: it compiles, and it defines the class it is named by.

Nothing of the file runs here (it is compiled and its top level read, never
executed), so a broken bot is one clean message (``file:line: SyntaxError:
...``) at the command line or config check, the same in ``match``, ``play``
and ``tournament``, instead of a bot process that exits or keeps crashing.
"""

from __future__ import annotations

import ast
import builtins
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

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


#: Programs that run a bot file of another language, by its suffix (for the ``cmd:'PROGRAM FILE'`` hint).
_RUNNERS: Final = {".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "npx tsx", ".rb": "ruby", ".sh": "sh"}


def command_hint(path: Path, given: str) -> str:
    """The ``cmd:`` spec that runs a bot file that is not Python, quoted for a shell (one argument)."""
    program = _RUNNERS.get(path.suffix.lower())
    if program is not None:
        return shlex.quote(f"cmd:{program} {given}")
    if os.access(path, os.X_OK):
        return shlex.quote(f"cmd:{given if '/' in given else './' + given}")
    return shlex.quote(f"cmd:PROGRAM {given}")


def check_bot_place(path: Path, given: str) -> None:
    """Before reading it: ``path`` is a Python file (not a folder, not a file of another language)."""
    if path.is_dir():
        raise BotFileError(
            f"{given} is a folder, not a Python bot file: expected path/bot.py (a bot of another language or a "
            "project runs as a command, cmd:'PROGRAM ARGS')"
        )
    if path.suffix != ".py":
        kind = f"a {path.suffix} file" if path.suffix else "no .py file"
        raise BotFileError(
            f"{given} is not a Python bot ({kind}): a bot in another language runs as a command, "
            f"quoted as one argument: {command_hint(path, given)}"
        )


def check_bot_file(path: Path, name: str | None = None, given: str | None = None) -> None:
    """Raise :class:`BotFileError` when ``path`` is not a Python file, does not compile or (statically) lacks
    ``name``, or, without a name, defines no bot or several. THE check every command makes of a bot file, before
    any process starts. ``given``: the path as the user wrote it, for messages."""
    check_bot_place(path, given or str(path))
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
        _check_one_bot(path, tree)
        return
    names, open_ended = _top_level_names(tree)
    if name not in names and not open_ended:
        classes = sorted(n.name for n in tree.body if isinstance(n, ast.ClassDef))
        found = ", ".join(classes) or "none"
        raise BotFileError(
            f"{path} defines no {name!r} (classes defined there: {found}): expected path/bot.py:ClassName"
        )


def _check_one_bot(path: Path, tree: ast.Module) -> None:
    """A file named without ``:Class`` must hold exactly one bot (what the SDK's loader would pick), refused here
    only when that is certain from the text: a class or function the text cannot resolve may be a bot."""
    found, uncertain = bots_defined(tree)
    if len(found) > 1:
        raise BotFileError(f"several bots in {path} ({', '.join(found)}): choose one with {path}:{found[0]}")
    if not found and not uncertain:
        raise BotFileError(
            f"no bot in {path}: define a class that subclasses skyjo_bot.Bot, "
            "or decorate a function view -> Action with @skyjo_bot.bot"
        )


@dataclass
class _Names:
    """What the top-level names of a bot file are, as far as its text tells."""

    bot_class: set[str] = field(default_factory=set)  # skyjo_bot's Bot
    decorator: set[str] = field(default_factory=set)  # skyjo_bot's bot
    sdk_modules: set[str] = field(default_factory=set)  # skyjo_bot itself
    harmless: set[str] = field(default_factory=lambda: set(dir(builtins)))  # never a bot: builtins, the stdlib
    local_classes: set[str] = field(default_factory=set)
    local_bots: set[str] = field(default_factory=set)


def _imports(tree: ast.Module) -> _Names:
    """Every import of the file (in any block): which names are the SDK's and which are the standard library's."""
    names = _Names()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            for alias in node.names:
                bound = alias.asname or alias.name
                if top == "skyjo_bot" and alias.name in ("Bot", "bot"):
                    (names.bot_class if alias.name == "Bot" else names.decorator).add(bound)
                elif top in sys.stdlib_module_names:
                    names.harmless.add(bound)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                bound = alias.asname or top
                if top == "skyjo_bot":
                    names.sdk_modules.add(bound)
                elif top in sys.stdlib_module_names:
                    names.harmless.add(bound)
    return names


def _kind(expr: ast.expr, names: _Names, sdk: set[str], attr: str) -> str:
    """What ``expr`` (or the function it calls) is: 'sdk' (skyjo_bot's ``attr``), 'bot' (a bot class of the file),
    'other' (surely no bot) or 'unknown' (imported from elsewhere, a local function, ...)."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Name):
        if expr.id in sdk:
            return "sdk"
        if expr.id in names.local_bots:
            return "bot"
        return "other" if expr.id in names.local_classes or expr.id in names.harmless else "unknown"
    if isinstance(expr, ast.Attribute):
        root = expr.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in names.sdk_modules:
            return "sdk" if expr.attr == attr else "other"  # skyjo_bot.Bot, skyjo_bot.bot.Bot
        return "other" if isinstance(root, ast.Name) and root.id in names.harmless else "unknown"
    return "unknown"


def _main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (never run when the SDK loads the file as a bot)."""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and not node.orelse  # type: ignore[attr-defined]
    )


def bots_defined(tree: ast.Module) -> tuple[list[str], bool]:
    """The top-level names that certainly hold a bot, as the SDK's loader finds them (a class that subclasses
    ``Bot``, an ``@bot`` function, an instance of such a class; public names only), and whether the text may
    define others it cannot resolve (a base class or a call from elsewhere, a block that binds names)."""
    names = _imports(tree)
    found: list[str] = []
    uncertain = False
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            kinds = {_kind(base, names, names.bot_class, "Bot") for base in node.bases}
            is_bot = bool(kinds & {"sdk", "bot"})
            (names.local_bots if is_bot else names.local_classes).add(node.name)
            found += [node.name] if is_bot and not node.name.startswith("_") else []
            uncertain |= "unknown" in kinds
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            kinds = {_kind(d, names, names.decorator, "bot") for d in node.decorator_list}
            found += [node.name] if "sdk" in kinds and not node.name.startswith("_") else []
            uncertain |= "unknown" in kinds or (node.name == "__getattr__")
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            public = [t.id for t in targets if isinstance(t, ast.Name) and not t.id.startswith("_")]
            value = _kind(node.value, names, names.decorator, "bot") if public else "other"
            if isinstance(node.value, ast.Call | ast.Name) and value in ("sdk", "bot"):
                found += public if isinstance(node.value, ast.Call) or value == "bot" else []
            uncertain |= isinstance(node.value, ast.Call | ast.Name) and value == "unknown"
        elif isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            uncertain = True
        elif not isinstance(node, ast.Import | ast.ImportFrom | ast.Expr | ast.Pass) and not _main_guard(node):
            uncertain |= any(
                isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign | ast.AnnAssign)
                or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
                for n in ast.walk(node)
            )
    uncertain |= "globals" in _called(tree)
    return found, uncertain
