"""check-bot: a conformance kit for bots, in any language (docs/check-bot.md).

A scripted referee (``referee``: a real gRPC BotService whose every message a
case chooses) walks the bot under check through named cases (``cases``), one
rule of docs/writing-a-bot.md each, starting its processes exactly as a league
does (``launch``). It sits beside the tournament and the gate and above the
execution layer: it imports ``execution``, ``players``, ``server`` and the
rules, never ``tournament``, ``gate`` or ``cli`` (those call it).
"""

from skyjo_ref.checkbot.before import CHECK_LEVELS, BotFailedCheck, check_before_play
from skyjo_ref.checkbot.cases import CASES, Case, quick_cases
from skyjo_ref.checkbot.run import Result, check_bot, read_expected_failures, unknown_cases, write_json, write_junit

__all__ = [
    "CASES",
    "CHECK_LEVELS",
    "BotFailedCheck",
    "Case",
    "Result",
    "check_before_play",
    "check_bot",
    "quick_cases",
    "read_expected_failures",
    "unknown_cases",
    "write_json",
    "write_junit",
]
