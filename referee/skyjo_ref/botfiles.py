"""What a managed bot consists of on disk: the files its sandbox mounts and its version digest covers.

One answer for both, so that what a bot can read is exactly what makes its
version (docs/sandbox.md, docs/tournaments.md):

- a bot with a declared ``root`` folder, and a ``command`` bot (its working
  folder is its root): the whole folder;
- a ``python`` bot without a ``root``: its file and the local modules it imports
  (found from the source, transitively, next to the file), never the rest of the
  folder — two bots in one folder each get what they import, so a changed helper
  module is a new version of the bots that import it and an unrelated file is
  nobody's;
- a ``module:Class`` bot installed in the environment: nothing of its own (the
  environment is mounted read-only for every Python bot).

Never the config's folder as a whole for a Python bot; the store, the records
and the logs are hidden by the sandbox even when they lie under a root.

Links: an isolated bot's files stay in its folder after every link is resolved
(:func:`check_links`). A link that leads out of it (to ``/etc/shadow``, a secret,
the store, the referee's package) refuses the bot before any game; the only
links out that are let through lead into what every isolated bot sees anyway
(the system's ``/usr`` and the Python runtime, e.g. a virtual environment's
``bin/python``), and never to a hidden path. What is mounted or copied for a
bot is then the link's target inside its folder, never followed further.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skyjo_bot.loader import split_spec

from skyjo_ref.players import BotSpec
from skyjo_ref.sandbox import python_runtime, referee_code

#: Folder names a root's digest skips: caches and version control, which change without the bot changing.
SKIPPED_DIRS: Final = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
SKIPPED_SUFFIXES: Final = (".pyc", ".pyo")


class BotLinkError(ValueError):
    """A link among an isolated bot's files that leads out of its folder (or to a hidden path); the message
    names the link and where it points."""


@dataclass(frozen=True, slots=True)
class BotFiles:
    """A bot's own files: ``root`` (a folder, mounted whole) or ``files`` (single files), absolute paths."""

    root: Path | None
    files: tuple[Path, ...] = ()

    def walk(self) -> Iterator[Path]:
        """Every file that belongs to the bot, in a stable order."""
        if self.root is not None:
            for folder, dirs, names in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
                for name in sorted(names):
                    if not name.endswith(SKIPPED_SUFFIXES):
                        yield Path(folder) / name
        yield from sorted(self.files)

    def digest(self) -> str:
        """``sha256:<hex>`` of every file's path (relative to the root or the first file's folder) and content."""
        h = hashlib.sha256()
        base = self.root if self.root is not None else (self.files[0].parent if self.files else Path("/"))
        for path in self.walk():
            if path.is_symlink() and not path.exists():
                continue
            try:
                data = path.read_bytes()
            except (IsADirectoryError, PermissionError, FileNotFoundError):
                continue
            rel = os.path.relpath(path, base)
            h.update(f"{len(rel)}:{rel}:{len(data)}:".encode())
            h.update(data)
        return "sha256:" + h.hexdigest()


def bot_folder(spec: BotSpec) -> Path | None:
    """The folder an isolated bot's files must stay in: its root, a command bot's working folder, a Python
    file's folder; None for a bot with no files of its own (a module installed in the environment)."""
    files = bot_files(spec)
    if files.root is not None:
        return files.root
    return files.files[0].parent if files.files else None


def check_links(spec: BotSpec, *, hidden: Sequence[Path] = ()) -> None:
    """For an isolated bot: refuse (:class:`BotLinkError`) a link among its files that leads out of its folder,
    unless into what every isolated bot sees anyway (``/usr``, the Python runtime), or that leads to or over a
    ``hidden`` path (the store, the output folder, the config, the seed secret; the referee's code always).
    A bot that is not isolated reads what its user may: its links are not checked."""
    if not spec.managed or spec.sandbox.isolation != "strict":
        return
    folder = bot_folder(spec)
    if folder is None:
        return
    files = bot_files(spec)
    hidden_real = [Path(os.path.realpath(h)) for h in (*hidden, referee_code())]
    shared_real = [Path(os.path.realpath(s)) for s in (Path("/usr"), *python_runtime())]
    for link in _links(files, folder):
        target = Path(os.path.realpath(link))
        near_hidden = any(target.is_relative_to(h) or h.is_relative_to(target) for h in hidden_real)
        if near_hidden:
            raise BotLinkError(
                f"bot {spec.name!r}: {link} is a link to {target}, which the run keeps out of every bot's view "
                "(the store, the output, the config or a secret): remove the link"
            )
        if not target.is_relative_to(folder) and not any(target.is_relative_to(s) for s in shared_real):
            raise BotLinkError(
                f"bot {spec.name!r}: {link} is a link to {target}, outside the bot's folder {folder}: "
                "an isolated bot's files must stay in its folder (copy the file in, or remove the link)"
            )


def _links(files: BotFiles, folder: Path) -> Iterator[Path]:
    """Every link among the bot's files: under its root (links to folders are not walked into), or on the way
    from the folder to each of its single files (``pkg -> /elsewhere`` for ``pkg/mod.py``)."""
    if files.root is not None:
        for here, dirs, names in os.walk(files.root):
            for name in (*dirs, *names):
                if (Path(here) / name).is_symlink():
                    yield Path(here) / name
        return
    seen: set[Path] = set()
    for file in files.files:
        try:
            parts = file.relative_to(folder).parts
        except ValueError:  # pragma: no cover - local_imports finds files under the folder only
            yield file
            continue
        path = folder
        for part in parts:
            path = path / part
            if path not in seen and path.is_symlink():
                seen.add(path)
                yield path


def bot_files(spec: BotSpec) -> BotFiles:
    """The files of managed bot ``spec`` (see the module docstring)."""
    if spec.root is not None:
        return BotFiles(spec.root.resolve())
    if spec.kind == "command":
        folder = spec.cwd if spec.cwd is not None else Path.cwd()
        return BotFiles(folder.resolve())
    if spec.kind == "python" and spec.python is not None:
        target = python_target(spec.python)
        if target is None:
            return BotFiles(None)
        return BotFiles(None, tuple(local_imports(target)))
    return BotFiles(None)


def python_target(python: str) -> Path | None:
    """The source file of a Python bot spec (``/abs/bot.py[:Name]`` or ``module:Name``); None when the module is
    installed in the environment (site-packages) or cannot be found."""
    parts = split_spec(python)
    target = parts.target
    if parts.is_file:
        return Path(target).resolve()
    try:
        found = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None or "site-packages" in found.origin:
        return None
    return Path(found.origin).resolve()


def local_imports(file: Path) -> list[Path]:
    """``file`` and the modules next to it that it imports, transitively (``import helper``, ``from . import x``,
    ``from pkg import mod``: ``helper.py``, ``pkg/__init__.py``, ``pkg/mod.py`` in the file's folder)."""
    folder = file.parent
    seen: dict[Path, None] = {}
    todo = [file]
    while todo:
        current = todo.pop()
        if current in seen or not current.is_file():
            continue
        seen[current] = None
        try:
            tree = ast.parse(current.read_bytes(), filename=str(current))
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                names = [base] if base else []
                names += [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
            for name in names:
                todo.extend(_module_files(folder, name))
    return list(seen)


def _module_files(folder: Path, dotted: str) -> list[Path]:
    """The files under ``folder`` that ``import dotted`` would load (each package's ``__init__.py`` on the way)."""
    parts = [p for p in dotted.split(".") if p]
    out: list[Path] = []
    here = folder
    for part in parts:
        package = here / part
        if (package / "__init__.py").is_file():
            out.append(package / "__init__.py")
            here = package
            continue
        module = here / f"{part}.py"
        if module.is_file():
            out.append(module)
        break
    return out
