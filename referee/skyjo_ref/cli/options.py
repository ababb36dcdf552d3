"""Options several commands share: rules from ``--rules`` and ``--option key=value``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skyjo_bot import Rules, RulesError

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


def rules_from_cli(preset: str, options: Iterable[str] = ()) -> Rules:
    """The rules a ``--rules PRESET --option k=v ...`` command line asks for (UserError when wrong)."""
    data: dict[str, Any] = {"preset": preset}
    data.update(parse_option(o) for o in options)
    try:
        return Rules.from_dict(data)
    except RulesError as exc:
        raise errors.UserError(str(exc)) from None
