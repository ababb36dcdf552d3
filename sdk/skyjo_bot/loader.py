"""Find a bot from a spec: ``path/to/bot.py``, ``path/to/bot.py:Name`` or ``package.module:Name``.

``Name`` may be a :class:`~skyjo_bot.Bot` subclass (created with no
arguments), a bot instance (such as a function decorated with ``@bot``) or a
plain function ``view -> Action``. Without ``:Name``, the file must define
exactly one bot. Every failure is a :class:`BotSpecError` with a one-line
message saying what is wrong and what is expected.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from skyjo_bot.bot import Bot, FunctionBot

SPEC_HELP = "expected path/to/bot.py, path/to/bot.py:ClassName or package.module:ClassName"


class BotSpecError(Exception):
    """A bot spec that does not name a usable bot."""


@dataclass(frozen=True, slots=True)
class SpecParts:
    """A Python bot spec, read: ``target`` (a file path or a module name), the ``name`` after the colon, if any."""

    target: str
    name: str | None
    is_file: bool


def split_spec(spec: str) -> SpecParts:
    """THE reading of ``path/bot.py[:Name]`` and ``package.module:Name``, for the SDK and the referee alike.

    The name is what follows the last colon when it holds no path separator and
    is not a ``.py`` file (``C:\\bots\\x.py`` has a drive colon, not a name); the
    target is a file when it ends in ``.py`` or holds a path separator."""
    spec = spec.strip()
    head, sep, tail = spec.rpartition(":")
    named = bool(sep and head and tail and "/" not in tail and "\\" not in tail and not tail.endswith(".py"))
    target, name = (head, tail) if named else (spec, None)
    return SpecParts(target, name, target.endswith(".py") or "/" in target or "\\" in target)


def is_file_spec(spec: str) -> bool:
    """Whether ``spec`` names a file (as opposed to ``package.module:Name``)."""
    return split_spec(spec).is_file


def load_bot(spec: str) -> Bot:
    """The bot ``spec`` names, ready to play."""
    spec = spec.strip()
    if not spec:
        raise BotSpecError(f"empty bot spec: {SPEC_HELP}")
    parts = split_spec(spec)
    target, name = parts.target, parts.name
    module = _load_file(target) if parts.is_file else _import_module(target)
    if name is not None:
        if not hasattr(module, name):
            found = ", ".join(n for n, _ in _bots_in(module)) or "none"
            raise BotSpecError(f"{target} has no {name!r} (bots defined there: {found})")
        return _make(getattr(module, name), f"{target}:{name}")
    bots = _bots_in(module)
    if not bots:
        raise BotSpecError(
            f"no bot in {target}: define a class that subclasses skyjo_bot.Bot, "
            "or decorate a function view -> Action with @skyjo_bot.bot"
        )
    if len(bots) > 1:
        names = ", ".join(n for n, _ in bots)
        raise BotSpecError(f"several bots in {target} ({names}): choose one with {target}:{bots[0][0]}")
    name, obj = bots[0]
    return _make(obj, f"{target}:{name}")


def _bots_in(module: ModuleType) -> list[tuple[str, Any]]:
    """Bot classes defined in ``module`` and bot instances at its top level."""
    found: list[tuple[str, Any]] = []
    for attr, obj in vars(module).items():
        if attr.startswith("_"):
            continue
        if inspect.isclass(obj):
            if issubclass(obj, Bot) and obj not in (Bot, FunctionBot) and obj.__module__ == module.__name__:
                if not inspect.isabstract(obj):
                    found.append((attr, obj))
        elif isinstance(obj, Bot):
            found.append((attr, obj))
    return found


def _make(obj: Any, where: str) -> Bot:
    if isinstance(obj, Bot):
        return obj
    if inspect.isclass(obj) and issubclass(obj, Bot):
        try:
            return obj()
        except Exception as exc:
            raise BotSpecError(
                f"cannot create {where}(): {_short(exc)}; a bot class must be constructible without arguments"
            ) from None
    if callable(obj) and not inspect.isclass(obj):
        return FunctionBot(obj)
    raise BotSpecError(f"{where} is {type(obj).__name__}, not a bot: expected a Bot subclass or a function")


def _load_file(target: str) -> ModuleType:
    path = Path(target).expanduser()
    if not path.is_file():
        raise BotSpecError(f"bot file {target!r} not found ({SPEC_HELP})")
    path = path.resolve()
    module_name = f"skyjo_user_bot_{path.stem}"
    # the bot's own folder first, so it can import its sibling modules
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise BotSpecError(f"cannot load {target!r} as Python code ({SPEC_HELP})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:  # file:line: SyntaxError: message, as the referee's own check says it
        line = f":{exc.lineno}" if exc.lineno else ""
        raise BotSpecError(f"{exc.filename or path}{line}: {type(exc).__name__}: {exc.msg}") from None
    except Exception as exc:
        raise BotSpecError(f"loading {target} failed: {_short(exc)}{_where(exc, str(path))}") from None
    return module


def _import_module(target: str) -> ModuleType:
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (target == exc.name or target.startswith(exc.name + ".")):
            raise BotSpecError(f"no module {target!r} ({exc}): {SPEC_HELP}") from None
        raise BotSpecError(f"importing {target} failed: {_short(exc)}{_where(exc, None)}") from None
    except Exception as exc:
        raise BotSpecError(f"importing {target} failed: {_short(exc)}{_where(exc, None)}") from None


def _short(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().replace("\n", " ")


def _where(exc: BaseException, path: str | None) -> str:
    """`` (at file:line)`` for the innermost frame of the user's code."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    if path is not None:
        mine = [f for f in frames if f.filename == path]
        frames = mine or frames
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno})"
