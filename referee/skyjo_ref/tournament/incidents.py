"""What went wrong, per bot, in a results store: strikes, forfeits and process crashes.

Read from the store alone (the seats' strike and forfeit columns, the records'
``meta.strikes`` for the first failure's text, the faults table for process
crashes), so a tournament, a merged league and a gate report the same counts,
and ``--fail-on`` (fail a CI job when a bot forfeited, was struck or crashed)
decides from the same numbers the summaries show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from skyjo_ref.tournament.store import Store

#: What ``--fail-on`` takes, and the incident each word means.
FAIL_ON_KINDS: Final = ("forfeit", "strike", "crash")
#: Fault kinds that are a bot process exiting (the referee restarted it, or gave up on it).
CRASH_KINDS: Final = frozenset({"crash", "gave_up"})
_PLURALS: Final = {"forfeits": "forfeit", "strikes": "strike", "crashes": "crash"}


@dataclass(slots=True)
class BotIncidents:
    """One bot's strikes (by reason), forfeits, crashes, other process faults, and its first failure."""

    bot: str
    strikes: int = 0
    forfeits: int = 0
    crashes: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # strikes by the referee's reason (timeout, illegal)
    other_faults: dict[str, int] = field(default_factory=dict)  # e.g. replaced
    first_failure: str | None = None  # "game KEY, round R: reason: detail" (rounds counted from 1)
    first_crash: str | None = None

    @property
    def kinds(self) -> list[str]:
        """The ``--fail-on`` words this bot triggers, in FAIL_ON_KINDS order."""
        counts = {"forfeit": self.forfeits, "strike": self.strikes, "crash": self.crashes}
        return [kind for kind in FAIL_ON_KINDS if counts[kind]]

    def describe(self) -> str:
        """``2 forfeits, 5 strikes (3 timeout, 2 illegal), 1 crash``."""
        parts: list[str] = []
        if self.forfeits:
            parts.append(_plural(self.forfeits, "forfeit"))
        if self.strikes:
            why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.reasons.items()))
            parts.append(_plural(self.strikes, "strike") + (f" ({why})" if why else ""))
        if self.crashes:
            parts.append(_plural(self.crashes, "crash", "crashes"))
        parts += [f"{n} {kind}" for kind, n in sorted(self.other_faults.items())]
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "forfeits": self.forfeits,
            "strikes": self.strikes,
            "strike_reasons": dict(sorted(self.reasons.items())),
            "crashes": self.crashes,
            "other_faults": dict(sorted(self.other_faults.items())),
            "first_failure": self.first_failure,
            "first_crash": self.first_crash,
        }


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def incidents(store: Store) -> dict[str, BotIncidents]:
    """Per bot with anything to report (sorted by name): what it did wrong in the stored games."""
    found: dict[str, BotIncidents] = {}

    def of(bot: str) -> BotIncidents:
        return found.setdefault(bot, BotIncidents(bot))

    for game in store.games():
        struck = [seat for seat, result in enumerate(game.seats) if result.strikes]
        for result in game.seats:
            if result.strikes or result.forfeit:
                entry = of(result.bot)
                entry.strikes += result.strikes
                entry.forfeits += int(result.forfeit)
        if not struck:
            continue
        meta = (store.record(game.ref) or {}).get("meta")
        listed = meta.get("strikes") if isinstance(meta, dict) else None
        for strike in listed if isinstance(listed, list) else []:
            seat = strike.get("seat") if isinstance(strike, dict) else None
            if not isinstance(seat, int) or not 0 <= seat < len(game.seats):
                continue
            entry = of(game.seats[seat].bot)
            reason = str(strike.get("reason") or "strike")
            entry.reasons[reason] = entry.reasons.get(reason, 0) + 1
            if entry.first_failure is None:
                where = f"game {game.ref}, round {int(strike.get('round', 0)) + 1}"
                if strike.get("decision"):
                    where += f", {strike['decision']}"
                detail = str(strike.get("detail") or strike.get("answered") or "")
                entry.first_failure = f"{where}: {reason}" + (f": {detail}" if detail else "")
    for fault in store.faults():
        entry = of(fault.bot)
        if fault.kind in CRASH_KINDS:
            entry.crashes += 1
            if entry.first_crash is None:
                entry.first_crash = fault.detail
        else:
            entry.other_faults[fault.kind] = entry.other_faults.get(fault.kind, 0) + 1
    return dict(sorted(found.items()))


def parse_fail_on(values: list[str] | None) -> frozenset[str]:
    """``--fail-on forfeit,crash --fail-on strike`` -> the set of words; ValueError naming a wrong one."""
    chosen: set[str] = set()
    for value in values or []:
        for word in value.split(","):
            word = word.strip().lower()
            if not word:
                continue
            word = _PLURALS.get(word, word)
            if word not in FAIL_ON_KINDS:
                raise ValueError(
                    f"--fail-on {value!r}: {word!r} is not one of {', '.join(FAIL_ON_KINDS)} "
                    "(any combination, e.g. --fail-on forfeit,crash)"
                )
            chosen.add(word)
    return frozenset(chosen)


def failing(found: dict[str, BotIncidents], fail_on: frozenset[str]) -> list[BotIncidents]:
    """The bots that trigger ``fail_on`` (by name)."""
    return [entry for entry in found.values() if fail_on & set(entry.kinds)]
