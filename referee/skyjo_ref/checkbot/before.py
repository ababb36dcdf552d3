"""Checked before it plays: check-bot's quick cases on a bot before its first game (a league's ``check: quick``,
``gate --check``), so a broken push fails in seconds naming the case instead of forfeiting games."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from skyjo_ref.checkbot.cases import quick_cases
from skyjo_ref.checkbot.run import check_bot
from skyjo_ref.players import BotSpec

#: The values of a league's ``check`` key: ``quick`` runs the quick cases, ``none`` nothing.
CHECK_LEVELS: Final = ("none", "quick")


class BotFailedCheck(Exception):
    """A bot failed a case before its first game; the message names the bot, the case and its log."""


def checkable(spec: BotSpec) -> bool:
    """Whether check-bot applies: a bot the referee starts as a process (built-ins and in-process bots speak no
    protocol; a remote bot is started by its owner)."""
    return spec.managed


async def check_before_play(bots: Sequence[BotSpec], log_dir: Path, rerun: Callable[[BotSpec], str]) -> list[str]:
    """Run the quick cases on each checkable bot, one after another; the notes to show (one a bot), or
    :class:`BotFailedCheck` at the first bot that fails one (``rerun``: the command that checks it fully)."""
    notes: list[str] = []
    seen: set[tuple[str, str]] = set()
    for spec in bots:
        if not checkable(spec) or (spec.name, spec.describe()) in seen:  # a gate's copies: checked once
            continue
        seen.add((spec.name, spec.describe()))
        results = await check_bot(spec, quick_cases(), log_dir / spec.name, first_failure=True)
        failed = [r for r in results if r.status == "fail"]
        if failed:
            first = failed[0]
            raise BotFailedCheck(
                f"bot {spec.name!r} failed check-bot case {first.case} before its first game: expected "
                f"{first.expected}; the bot {first.did} (log: {first.log}); every case: " + rerun(spec)
            )
        seconds = sum(r.seconds for r in results)
        notes.append(f"bot {spec.name}: passed check-bot's {len(results)} quick cases in {seconds:.1f} s")
    return notes
