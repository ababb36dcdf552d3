"""Rendering for the gate: a live status line, the final lines (fastchess style), Markdown for CI pages."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from rich.live import Live

    from skyjo_ref.gate.tracker import GateTracker

#: Not a terminal: a progress line at most every this many counted games, or seconds (whichever comes first).
PLAIN_EVERY_GAMES: Final = 100
PLAIN_EVERY_S: Final = 15.0

VERDICT_WORDS: Final = {
    "accepted": "ACCEPTED",
    "rejected": "REJECTED",
    "inconclusive": "INCONCLUSIVE (max games reached)",
    "running": "UNFINISHED",
}


def status_line(info: Mapping[str, Any], played: int | None = None, width: int | None = None) -> str:
    """One line: games, pentanomial, LLR against its bounds, Elo +/- 95%. A shard has only part of the games: its
    line shows the bounds it stops at (1/N of the test's) and no verdict, which only the merged shards reach.
    Within ``width`` (a terminal's columns) the line says less rather than be cut mid-number: shorter words
    first, then without the block counts, then without this run's count."""
    lower, upper = info["stop_bounds"] if info.get("shard") else info["bounds"]
    elo_lo, elo_hi = info["elo_ci"]
    half = (elo_hi - elo_lo) / 2
    if info.get("shard"):
        tail = f"  shard {info['shard']}: no verdict (the merged shards decide)"
        short_tail = f"  shard {info['shard']}"
    else:
        tail = short_tail = f"  {info['verdict']}" if info["verdict"] != "running" else ""
    now = f"  [{played} played now]" if played is not None else ""
    line = (
        f"games {info['games']}  {_counts(info)}  "
        f"LLR {info['llr']:.2f} ({lower:.2f}, {upper:.2f})  "
        f"Elo {info['elo']:.1f} +/- {half:.1f}" + tail + now
    )
    if width is None or len(line) <= width:
        return line
    core = f"LLR {info['llr']:.2f} ({lower:.2f},{upper:.2f}) Elo {info['elo']:.1f}+/-{half:.1f}{short_tail}"
    for candidate in (
        f"{info['games']} games {_counts(info)} {core}" + (f" [{played} now]" if played is not None else ""),
        f"{info['games']} games {core}" + (f" [{played} now]" if played is not None else ""),
        f"{info['games']} games {core}",
    ):
        if len(candidate) <= width:
            return candidate
    return core


class GateProgress:
    """Live on a terminal (one updating line on stderr); plain lines, thinned out, elsewhere."""

    def __init__(
        self, console: Console, plain: bool, every_games: int = PLAIN_EVERY_GAMES, every_s: float = PLAIN_EVERY_S
    ) -> None:
        self.console = console
        self.every_games = every_games
        self.every_s = every_s
        self.plain = plain or not console.is_terminal
        self.live: Live | None = None
        self.last_games = -1
        self.last_time = 0.0
        self.played = 0
        if not self.plain:
            from rich.live import Live  # a terminal's live line: not loaded for --help or a CI log

            self.live = Live(Text("gate: starting"), console=console, refresh_per_second=4, transient=True)
            self.live.start()

    def update(self, tracker: GateTracker, played: int) -> None:
        info = tracker.info()
        if self.live is not None:  # one terminal line, never cut mid-number (Rich would cut it at the edge)
            self.live.update(Text(status_line(info, played, width=self.console.width - 1)))
            return
        line = status_line(info, played)
        now = time.monotonic()
        games = info["games"]
        due = games - self.last_games >= self.every_games or (
            now - self.last_time >= self.every_s and games != self.last_games
        )
        if games == 0 and not tracker.done:
            return
        if due or (tracker.done and games != self.last_games):
            self.console.print(line, highlight=False, markup=False)
            self.last_games, self.last_time = games, now

    def note(self, message: str) -> None:
        self.console.print(f"note: {message}", highlight=False, markup=False)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def final_lines(info: Mapping[str, Any]) -> list[str]:
    """What a chess developer reads at the end of an SPRT (fastchess's lines, and the verdict)."""
    lower, upper = info["bounds"]
    llr = info["llr"]
    bound = upper if llr >= 0 else lower
    percent = 100.0 * llr / bound if bound else 0.0
    if llr < 0:
        percent = -percent
    elo_lo, elo_hi = info["elo_ci"]
    nelo_lo, nelo_hi = info["nelo_ci"]
    games = info["games"]
    k = info.get("players", 2)
    if info.get("field"):
        against = f"(baseline) with the field {', '.join(info['field'])} at {k}-player tables"
    else:
        against = "(baseline)" if k == 2 else f"(baseline, {k - 1} copies at {k}-player tables)"
    lines = [
        f"Gate: {info['candidate']} (candidate) vs {info['baseline']} {against}: {games} games "
        f"({_deals(info)}), seed {info['seed']}",
        _counts(info, long=True),
        f"LLR: {llr:.2f} ({percent:.1f}%) ({lower:.2f}, {upper:.2f}) [{info['elo0']:.2f}, {info['elo1']:.2f}]"
        + (" (normalized Elo)" if info.get("elo_model") == "normalized" else ""),
        f"Elo: {info['elo']:.2f} +/- {(elo_hi - elo_lo) / 2:.2f}, nElo: {info['nelo']:.2f} +/- "
        f"{(nelo_hi - nelo_lo) / 2:.2f}",
        f"LOS: {100 * info['los']:.2f} %",
    ]
    stop_lo, stop_hi = info["stop_bounds"]
    if info.get("shard"):
        lines.append(f"Shard stop bounds (1/N of Wald's): ({stop_lo:.2f}, {stop_hi:.2f})")
    elif abs(stop_lo - lower) > 0.005 or abs(stop_hi - upper) > 0.005:
        lines.append(f"Stop bounds after overshoot correction: ({stop_lo:.2f}, {stop_hi:.2f})")
    if info.get("luck_adjusted"):
        lines.append("Scores are luck-adjusted (control variate of the cards' luck); Ptnml counts are raw")
    if info.get("shard"):
        lines.append(
            f"Shard {info['shard']} done (its own LLR {llr:.2f}; a shard stops at 1/N of a bound): merge the shards "
            "(skyjo-ref merge OUT SHARD...) and run the same gate with --out OUT for the verdict"
        )
    else:
        lines.append(f"Verdict: {VERDICT_WORDS[info['verdict']]}: {explain(info)}")
    return lines


def _deals(info: Mapping[str, Any]) -> str:
    k = info.get("players", 2)
    block = info.get("block_games") or k
    if info.get("field"):
        return f"{info['games'] // block} deals, balanced seatings: {block} games a deal"
    return f"{info['games'] // block} deals, " + ("both seatings" if k == 2 else f"the candidate in each of {k} seats")


def _counts(info: Mapping[str, Any], long: bool = False) -> str:
    """The pentanomial at two players; at K, the block scores in quarters (the test uses their mean and variance)."""
    if info.get("pentanomial") is not None:
        counts = info["pentanomial"]
        return f"Ptnml(0-2): [{', '.join(str(c) for c in counts)}]" if long else f"Ptnml(0-2) {counts}"
    counts = info.get("block_scores") or []
    return f"Blocks(0-1 by 1/4): [{', '.join(str(c) for c in counts)}]" if long else f"Blocks {counts}"


def _counts_row(info: Mapping[str, Any]) -> tuple[str, str]:
    if info.get("pentanomial") is not None:
        return ("Ptnml(0-2)", f"`{info['pentanomial']}`")
    return ("Block scores (0-1 by 1/4)", f"`{info.get('block_scores')}`")


def explain(info: Mapping[str, Any]) -> str:
    """The verdict in words, with the hypotheses."""
    h0, h1 = f"{info['elo0']:g}", f"{info['elo1']:g}"
    verdict = info["verdict"]
    if verdict == "accepted":
        return f"H1 (Elo {h1}) accepted over H0 (Elo {h0}) at alpha {info['alpha']:g}"
    if verdict == "rejected":
        return f"H0 (Elo {h0}) accepted over H1 (Elo {h1}) at beta {info['beta']:g}"
    if verdict == "inconclusive":
        return f"no bound crossed in {info['max_games']} games (--max-games); raise it and rerun to go on"
    return "the test stopped before a verdict; run the same command to go on"


def markdown(info: Mapping[str, Any], extra: Mapping[str, Any]) -> str:
    """A CI summary (GitHub's step summary): the verdict first, then the numbers."""
    shard = info.get("shard")
    icon = "⏸️" if shard else {"accepted": "✅", "rejected": "❌", "inconclusive": "⚠️", "running": "⏸️"}[info["verdict"]]
    lower, upper = info["stop_bounds"] if shard else info["bounds"]
    elo_lo, elo_hi = info["elo_ci"]
    verdict = (
        f"**none**: shard {shard} stops at 1/N of the bounds; merge the shards and run the gate on the merged store"
        if shard
        else f"**{info['verdict']}**: {explain(info)}"
    )
    rows = [
        ("Verdict", verdict),
        ("Games", f"{info['games']} ({_deals(info)})"),
        _counts_row(info),
        ("LLR", f"{info['llr']:.2f}, bounds ({lower:.2f}, {upper:.2f}), Elo [{info['elo0']:g}, {info['elo1']:g}]"),
        ("Elo", f"{info['elo']:.1f} (95% {elo_lo:.1f} to {elo_hi:.1f})"),
        ("nElo", f"{info['nelo']:.1f}"),
        ("LOS", f"{100 * info['los']:.1f} %"),
    ]
    rows += [(str(k), v if isinstance(v, str) else json.dumps(v)) for k, v in extra.items()]
    out = [
        f"## {icon} Gate {f'shard {shard} done' if shard else info['verdict']}: "
        f"`{info['candidate']}` vs `{info['baseline']}`",
        "",
        "| | |",
        "|---|---|",
    ]
    out += [f"| {key} | {value.replace('|', '/')} |" for key, value in rows]
    return "\n".join(out) + "\n"
