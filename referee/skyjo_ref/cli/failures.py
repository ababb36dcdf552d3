"""What went wrong with each bot of a match, in words: its first failure, its crashes, where its output is.

A strike's detail carries what the bot said (the SDK sends the exception, its
message and where it was raised); a crash shows the process's last lines of
output (a Python traceback's last line, a Go panic's message, not only a stack
frame); every bot process's whole output is in a log file, named here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from skyjo_ref.execution.lineup import LineupResult
    from skyjo_ref.players import ProcessFault

#: Lines of a crashed process's output shown under its one-line description.
TAIL_LINES = 12


def first_failures(records: Sequence[dict[str, Any]], seat_names: Sequence[str]) -> dict[str, str]:
    """Seat name -> its first strike (or, without strikes, its first forfeit), in words, games in order.

    Games, rounds and decisions are counted from 1 here, for people (records count from 0)."""
    found: dict[str, str] = {}
    ordered = sorted(records, key=lambda r: int((r.get("meta") or {}).get("game", 0)))
    for record in ordered:
        meta = record.get("meta") or {}
        slots = meta.get("slots") or list(range(len(record.get("players", []))))
        game = int(meta.get("game", 0)) + 1

        def seat_name(seat: int, slots: list[int] = slots) -> str:
            slot = slots[seat] if 0 <= seat < len(slots) else seat
            return seat_names[slot] if 0 <= slot < len(seat_names) else f"seat {seat + 1}"

        for strike in meta.get("strikes", []):
            name = seat_name(int(strike.get("seat", -1)))
            if name in found:
                continue
            where = f"game {game}, round {int(strike.get('round', 0)) + 1}"
            if strike.get("decision"):
                where += f", {strike['decision']}"
            detail = strike.get("detail") or strike.get("answered") or ""
            instead = f"; the referee played {strike['played']} instead" if strike.get("played") else ""
            found[name] = f"{where}: {strike.get('reason', 'strike')}: {detail}{instead}"
        for entry in meta.get("forfeited", []):
            name = seat_name(int(entry.get("seat", -1)))
            if name not in found:
                found[name] = (
                    f"game {game}, round {int(entry.get('round', 0)) + 1}: forfeited: {entry.get('reason', '')}"
                )
    return found


def show_failures(result: LineupResult, console: Console) -> None:
    """Each failing bot's first failure and crashes, and where each bot's whole output is (on stderr)."""
    report_failures(console, result.records, result.lineup.seat_names, result.crashes, result.log_paths)


def report_failures(
    console: Console,
    records: Sequence[dict[str, Any]],
    seat_names: Sequence[str],
    crashes: Mapping[str, Sequence[ProcessFault]],
    log_paths: Mapping[str, Path],
) -> None:
    """The lines of :func:`show_failures`, for any command that seats bots (``match``, ``play``)."""
    failures = first_failures(records, seat_names)
    for name in seat_names:
        log_path = log_paths.get(name)
        output = f"; all of its output: {log_path}" if log_path is not None else ""
        if name in failures:
            console.print(f"{name}: first failure in {failures[name]}{output}", highlight=False, markup=False)
        for fault in crashes.get(name, []):
            lines = [f"{name}: its process {fault.describe()}; it was restarted{output}"]
            lines += [f"    {line}" for line in fault.tail(TAIL_LINES)]
            console.print("\n".join(lines), highlight=False, markup=False)
    folders = sorted({str(p.parent) for p in log_paths.values()})
    if folders:
        console.print(f"bot output is kept in {', '.join(folders)}", highlight=False, markup=False)
