"""What several commands share: rules from ``--rules``/``--option``, ``--json`` output, the table console."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from skyjo_bot import Rules, RulesError
from skyjo_bot.types import TimeControl, TimeControlError

from skyjo_ref.cli import errors


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with true/false and integers read as such."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise errors.UserError(f"--option {text!r}: expected key=value, e.g. --option column_clear=false")
    value: Any = raw.strip()
    if value.lower() in ("true", "false"):
        value = value.lower() == "true"
    else:
        try:
            value = int(value)
        except ValueError:
            pass
    return key.strip(), value


def time_control_from_cli(flags: Mapping[str, int | None], base: TimeControl | None = None) -> TimeControl:
    """The time control ``--decision-ms`` etc. ask for, checked by :class:`TimeControl` (which owns the
    limits, as for config files); flags left at ``None`` keep ``base``'s values. UserError when wrong."""
    try:
        return TimeControl.from_mapping({key: value for key, value in flags.items() if value is not None}, base)
    except TimeControlError as exc:
        flag = "--" + (exc.key or "time-control").replace("_", "-")
        raise errors.UserError(f"{flag}: {exc.problem}") from None


def rules_from_cli(preset: str, options: Iterable[str] = ()) -> Rules:
    """The rules a ``--rules PRESET --option k=v ...`` command line asks for (UserError when wrong)."""
    data: dict[str, Any] = {"preset": preset}
    data.update(parse_option(o) for o in options)
    try:
        return Rules.from_dict(data)
    except RulesError as exc:
        raise errors.UserError(str(exc)) from None


def check_json_target(path: Path | None) -> None:
    """Refuse a ``--json`` file that cannot be written, before any game is played."""
    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise errors.UserError(f"--json {path}: is a folder; expected a file name (or - for stdout)")
    if not path.parent.is_dir():
        raise errors.UserError(f"--json {path}: folder {path.parent} does not exist")


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as indented JSON to ``path`` (``-``: stdout)."""
    text = json.dumps(data, indent=2) + "\n"
    if str(path) == "-":
        typer.echo(text, nl=False)
        return
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise errors.UserError(f"--json {path}: cannot write: {exc.strerror or exc}") from None


def table_console(stderr: bool = False) -> Console:
    """Where tables go; in a pipe or a CI log, wide enough that no column is cut."""
    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=200)
