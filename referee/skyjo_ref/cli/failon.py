"""``--fail-on forfeit,strike,crash``: fail a CI job when a bot forfeited, was struck or crashed.

The check runs on the whole store once the command's own work is done; it
names the bots and exits :data:`errors.EXIT_FAIL_ON` (5), but only in place of
a passing exit (0): any other code (a gate's rejection, an unfinished run)
already fails the job and is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

import typer

from skyjo_ref.cli import errors

if TYPE_CHECKING:  # the store's incidents load when they are checked, not for a command's --help
    from skyjo_ref.tournament.incidents import BotIncidents

FailOnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        metavar="KINDS",
        help="Exit 5 when a bot did any of these (comma-separated, or repeat): forfeit, strike, crash.",
        show_default=False,
    ),
]


def check_fail_on(values: list[str] | None) -> frozenset[str]:
    """The ``--fail-on`` words, checked before any game is played (UserError naming a wrong word)."""
    from skyjo_ref.tournament.incidents import parse_fail_on

    try:
        return parse_fail_on(values)
    except ValueError as exc:
        raise errors.UserError(str(exc)) from None


def fail_message(found: Mapping[str, BotIncidents], fail_on: frozenset[str]) -> str | None:
    """``--fail-on forfeit,crash: bot x: 1 forfeit; bot y: 2 crashes`` (None when nothing triggers)."""
    from skyjo_ref.tournament.incidents import failing

    bad = failing(dict(found), fail_on)
    if not bad:
        return None
    asked = ",".join(kind for kind in ("forfeit", "strike", "crash") if kind in fail_on)
    return f"--fail-on {asked}: " + "; ".join(f"bot {entry.bot}: {entry.describe()}" for entry in bad)


def raise_if_failed(message: str | None, exit_code: int = errors.EXIT_OK) -> None:
    """Exit 5 with the message when ``--fail-on`` triggered and the command would otherwise pass."""
    if message is not None and exit_code == errors.EXIT_OK:
        raise errors.UserError(message, exit_code=errors.EXIT_FAIL_ON)
