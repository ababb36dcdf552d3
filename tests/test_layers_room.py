"""One execution room: referees start, bots are loaded and bot processes are made in one place each.

``skyjo_ref.execution.room`` is where every command (match, play, tournament,
gate, check-bot) seats bots on a referee; the commands and the layers above
the execution layer never start a referee, a bot process or a pool themselves.
These checks read the source (calls and imports), so a second copy of the
room cannot grow back unnoticed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import skyjo_ref
from test_execution_imports import imported_modules

PACKAGE = Path(skyjo_ref.__file__).parent

#: Who may construct what (paths relative to skyjo_ref/). ``serve`` is the referee itself; the learning
#: environment (env/) loads a bot to play inside Python, beside the referee, never through it.
CONSTRUCTORS = {
    "RefereeServer": {"execution/room.py", "cli/serve_cmd.py"},
    "MatchClient": {"execution/room.py"},
    "BotPool": {"execution/room.py", "execution/backend.py"},
    "ManagedBot": {"execution/pool.py"},
    "load_bot": {"execution/room.py", "env/single.py"},
}
#: Layers above the execution layer, and what of the room's insides they must not import.
ABOVE = ("cli", "tournament", "gate", "report")
INSIDES = (
    "skyjo_ref.execution.pool",
    "skyjo_ref.server.server",
    "skyjo_ref.server.services",
    "skyjo_bot.loader.load_bot",
)


def _calls(path: Path) -> set[str]:
    """Names called in ``path`` (``X(...)`` and ``a.X(...)``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_referees_bot_processes_and_loaded_bots_are_made_in_the_room_only() -> None:
    wrong = []
    for path in _sources():
        where = path.relative_to(PACKAGE).as_posix()
        for name in _calls(path) & CONSTRUCTORS.keys():
            if where not in CONSTRUCTORS[name]:
                wrong.append(f"{where}: {name}(...)")
    assert wrong == []


def test_the_commands_and_the_layers_above_never_reach_into_the_room() -> None:
    wrong = []
    for layer in ABOVE:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            where = path.relative_to(PACKAGE).as_posix()
            for line, name in imported_modules(path, f"skyjo_ref.{layer}"):
                if where == "cli/serve_cmd.py" and name.startswith("skyjo_ref.server"):
                    continue  # serve runs the referee itself
                if name.startswith(INSIDES):
                    wrong.append(f"{where}:{line}: {name}")
    assert wrong == []


def test_the_checker_sees_a_referee_started_in_a_command(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text(
        "from skyjo_ref.server.server import RefereeServer\nasync def f():\n    s = RefereeServer(None)\n",
        encoding="utf-8",
    )
    assert "RefereeServer" in _calls(source)
    assert [name for _, name in imported_modules(source, "skyjo_ref.cli")] == ["skyjo_ref.server.server.RefereeServer"]
