"""Positions of a recorded game and their Rich rendering, for ``skyjo-ref replay``.

A :class:`ReplayCursor` holds a record that :func:`records.replay` accepted
and rebuilds the table at any point (round ``k``, after its first ``done``
actions) by replaying the record's own decks and actions through the engine:
no second implementation of the rules, so what is shown is what was played.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from skyjo_bot.types import COLUMNS, ROWS, DecisionKind, Event, EventKind, Grid, SlotState

from skyjo_ref import records
from skyjo_ref.rules.engine import FixedDealer, Game, LoggedAction, RoundLog


@dataclass(frozen=True, slots=True)
class Position:
    """The table at one point of a recorded game, as everyone at it saw it."""

    round: int
    done: int  # actions of this round applied so far
    total_actions: int  # actions in this round
    grids: tuple[Grid, ...]
    discard_top: int | None
    draw_pile_size: int | None
    seat: int | None  # whose decision is due next (None once the round is over)
    decision: DecisionKind | None
    hand: int | None  # the card the due seat holds, if any
    totals_before: tuple[int, ...]  # game totals before this round
    log: tuple[str, ...]  # this round's actions so far, described
    result: RoundLog | None  # the round's result once it is over

    @property
    def round_over(self) -> bool:
        return self.done == self.total_actions


class ReplayCursor:
    """Rebuilds any position of a valid record (replayed once up front to check it)."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.game = records.replay(record)  # raises RecordError with the place if invalid
        self.record = record
        self.players = self.game.players
        self.rules = self.game.rules
        self.rounds: list[RoundLog] = self.game.rounds
        self.forfeits = sorted(self.game.forfeits)

    @property
    def num_rounds(self) -> int:
        return len(self.rounds)

    def actions_in(self, round_index: int) -> int:
        return len(self.rounds[round_index].actions)

    def position(self, round_index: int, done: int) -> Position:
        """The table in round ``round_index`` after its first ``done`` actions."""
        if not 0 <= round_index < self.num_rounds:
            raise IndexError(f"round {round_index} is not in this game (rounds 0-{self.num_rounds - 1})")
        total = self.actions_in(round_index)
        if not 0 <= done <= total:
            raise IndexError(f"round {round_index} has {total} actions, cannot show {done} of them")
        game = Game(
            len(self.players),
            self.rules,
            dealer=FixedDealer([r.deck for r in self.rounds], [r.reshuffles for r in self.rounds]),
            players=self.players,
        )
        for log in self.rounds[:round_index]:
            for logged in log.actions:
                game.apply(logged.action, auto=logged.auto)
        totals_before = tuple(game.totals)
        game.drain_events()
        described: list[str] = []
        for logged in self.rounds[round_index].actions[:done]:
            game.apply(logged.action, auto=logged.auto)
            described.append(describe(logged, game.drain_events(), self.players))
        log = self.rounds[round_index]
        if done == total:
            assert log.final_grids is not None
            return Position(
                round_index, done, total, log.final_grids, None, None, None, None, None, totals_before,
                tuple(described), log,
            )  # fmt: skip
        seat = game.seat
        view = game.view(seat)
        return Position(
            round_index, done, total, view.grids, view.discard_top, view.draw_pile_size, seat, view.decision,
            view.hand, totals_before, tuple(described), None,
        )  # fmt: skip


def describe(logged: LoggedAction, events: Sequence[Event], players: Sequence[str]) -> str:
    """One action in words, with the card values the table saw."""
    parts: list[str] = []
    for event in events:
        kind = event.kind
        if kind is EventKind.REVEAL:
            parts.append(f"reveals {event.value} at {event.pos}")
        elif kind is EventKind.DRAW:
            parts.append("draws")
        elif kind is EventKind.TAKE:
            parts.append(f"takes the {event.value} from the discard pile")
        elif kind is EventKind.DISCARD:
            parts.append(f"discards the drawn {event.value}")
        elif kind is EventKind.SWAP:
            parts.append(f"puts {event.value} at {event.pos}, discarding {event.replaced}")
        elif kind is EventKind.COLUMN_CLEARED:
            parts.append(f"clears column {event.pos} (three {event.value}s)")
        elif kind is EventKind.RESHUFFLE:
            parts.append(f"(the draw pile is rebuilt from {event.value} discards)")
        elif kind is EventKind.ROUND_FINISHING:
            parts.append("and has no hidden card left: everyone else plays once more")
        elif kind is EventKind.TURNS_START:
            parts.append(f"- seat {event.seat} ({players[event.seat or 0]}) starts the turns")
    if logged.auto:
        parts.append(f"[chosen by the referee: {logged.auto}]")
    who = f"seat {logged.seat} {players[logged.seat]}"
    return f"{who}: {logged.action} - " + " ".join(parts)


# ---------------------------------------------------------------------- rendering


def card_text(state: SlotState, value: int | None) -> Text:
    """A card as the table shows it: ``?`` hidden, ``.`` removed, else its value in its colour."""
    if state is SlotState.HIDDEN:
        return Text("?", style="dim")
    if state is SlotState.REMOVED or value is None:
        return Text(".", style="dim")
    if value < 0:
        style = "bold blue"
    elif value == 0:
        style = "bold cyan"
    elif value <= 4:
        style = "bold green"
    elif value <= 8:
        style = "bold yellow"
    else:
        style = "bold red"
    return Text(str(value), style=style)


def grid_table(grid: Grid, title: str, highlight: bool = False, labels: bool = False, plain: bool = False) -> Table:
    """One grid: ``?`` hidden, ``.`` removed; with ``labels`` each slot shows its position (``5:-2``);
    ``plain``: no box (pipes and logs)."""
    table = Table(
        title=title,
        box=None if plain else box.HEAVY_HEAD,
        show_header=False,
        show_lines=False,
        title_style="bold reverse" if highlight else "bold",
        padding=(0, 1),
    )
    for _ in range(COLUMNS):
        table.add_column(justify="right", min_width=5 if labels else 2)
    for row in range(ROWS):
        cells = []
        for pos in range(COLUMNS * row, COLUMNS * (row + 1)):
            cell = Text(f"{pos}:", style="dim") if labels else Text()
            cell.append_text(card_text(grid.states[pos], grid.values[pos]))
            cells.append(cell)
        table.add_row(*cells)
    return table


def grids_row(position: Position, players: Sequence[str], plain: bool = False) -> Table:
    """All grids side by side (the due seat's title highlighted)."""
    row = Table.grid(padding=(0, 3))
    cells = []
    for seat, grid in enumerate(position.grids):
        score = grid.revealed_sum()
        title = f"{seat} {players[seat]} ({score:+d})"
        cells.append(grid_table(grid, title, highlight=seat == position.seat, plain=plain))
    for _ in cells:
        row.add_column()
    row.add_row(*cells)
    return row


def render_position(
    cursor: ReplayCursor, position: Position, log_lines: int | None = 12, plain: bool = False
) -> RenderableType:
    """Header, grids, piles, the round's action log and (once over) its result.

    Rounds and actions are counted from 1 here, for people (the record counts from 0)."""
    players = cursor.players
    header = Text(f"Round {position.round + 1} of {cursor.num_rounds}", style="bold")
    if position.done == 0:
        header.append("  ·  before the first action")
    else:
        header.append(f"  ·  after action {position.done} of {position.total_actions}")
    if position.round_over:
        header.append("  ·  round over", style="bold")
    parts: list[RenderableType] = [header, grids_row(position, players, plain)]
    if not position.round_over:
        assert position.seat is not None and position.decision is not None
        top = "empty" if position.discard_top is None else str(position.discard_top)
        piles = Text(f"discard top: {top}   draw pile: {position.draw_pile_size} cards")
        due = Text(f"next: seat {position.seat} {players[position.seat]} - {position.decision.value}")
        if position.hand is not None:
            due.append(f" (holding {position.hand})")
        parts += [piles, due]
    log = list(enumerate(position.log))
    if log_lines is not None and len(log) > log_lines:
        parts.append(Text(f"  ... {len(log) - log_lines} earlier actions", style="dim"))
        log = log[-log_lines:]
    for i, line in log:
        style = "bold" if i == len(position.log) - 1 else ""
        parts.append(Text(f"  {i + 1:>3}  {line}", style=style))
    if position.result is not None:
        parts.append(round_result_table(cursor, position.round, plain))
    return Group(*parts)


def round_result_table(cursor: ReplayCursor, round_index: int, plain: bool = False) -> Table:
    log = cursor.rounds[round_index]
    assert log.raw is not None and log.scores is not None
    totals = [0] * len(cursor.players)
    for earlier in cursor.rounds[: round_index + 1]:
        assert earlier.scores is not None
        totals = [t + s for t, s in zip(totals, earlier.scores)]
    table = Table(
        title=f"Round {round_index + 1} result (finisher: seat {log.finisher})",
        title_justify="left",
        box=None if plain else box.HEAVY_HEAD,
    )
    table.add_column("seat", justify="right")
    table.add_column("player")
    table.add_column("cards", justify="right")
    table.add_column("score", justify="right")
    table.add_column("total", justify="right")
    for seat, name in enumerate(cursor.players):
        note = " (penalised)" if seat == log.finisher and log.scores[seat] != log.raw[seat] else ""
        table.add_row(str(seat), name, str(log.raw[seat]), f"{log.scores[seat]}{note}", str(totals[seat]))
    return table


def render_summary(cursor: ReplayCursor) -> RenderableType:
    """One line per round (counted from 1), then the final table: the default output on a terminal."""
    players = cursor.players
    rules = ", ".join(f"{k}={v}" for k, v in cursor.rules.options().items())
    head = Text(f"{len(players)} players: " + ", ".join(f"{i} {p}" for i, p in enumerate(players)))
    rules_line = Text(f"rules: {cursor.rules.preset or 'custom'} ({rules})", style="dim")
    rounds = Table(title="Rounds", title_justify="left")
    rounds.add_column("round", justify="right")
    rounds.add_column("actions", justify="right")
    rounds.add_column("finisher", justify="right")
    for name in players:
        rounds.add_column(f"{name}\nscore (total)", justify="right")
    totals = [0] * len(players)
    for k, log in enumerate(cursor.rounds):
        assert log.scores is not None and log.raw is not None
        totals = [t + s for t, s in zip(totals, log.scores)]
        cells = []
        for seat in range(len(players)):
            mark = "*" if seat == log.finisher and log.scores[seat] != log.raw[seat] else ""
            cells.append(f"{log.scores[seat]}{mark} ({totals[seat]})")
        rounds.add_row(str(k + 1), str(len(log.actions)), str(log.finisher), *cells)
    rounds.caption = "* finisher penalised (not strictly lowest)"
    return Group(head, rules_line, rounds, final_table(cursor))


def final_table(cursor: ReplayCursor) -> Table:
    game = cursor.game
    assert game.ranks is not None and game.winners is not None
    table = Table(title="Final", title_justify="left")
    table.add_column("rank", justify="right")
    table.add_column("seat", justify="right")
    table.add_column("player")
    table.add_column("total", justify="right")
    order = sorted(range(len(cursor.players)), key=lambda s: (game.ranks[s] if game.ranks else 0, s))
    for seat in order:
        notes = []
        if seat in game.winners:
            notes.append("winner")
        if seat in game.forfeits:
            notes.append("forfeited")
        name = cursor.players[seat] + (f" ({', '.join(notes)})" if notes else "")
        table.add_row(str(game.ranks[seat]), str(seat), name, str(game.totals[seat]))
    return table


def summary_lines(cursor: ReplayCursor) -> str:
    """The summary as plain tab-separated lines, for pipes and logs: no boxes, one line per round."""
    players = cursor.players
    rules = ", ".join(f"{k}={v}" for k, v in cursor.rules.options().items())
    lines = [f"{len(players)} players: " + ", ".join(f"{i} {p}" for i, p in enumerate(players))]
    lines.append(f"rules: {cursor.rules.preset or 'custom'} ({rules})")
    lines.append("rounds (* finisher penalised, not strictly lowest)")
    lines.append("\t".join(["round", "actions", "finisher", *(f"{name} score (total)" for name in players)]))
    totals = [0] * len(players)
    for k, log in enumerate(cursor.rounds):
        assert log.scores is not None and log.raw is not None
        totals = [t + s for t, s in zip(totals, log.scores)]
        cells = [
            f"{log.scores[seat]}{'*' if seat == log.finisher and log.scores[seat] != log.raw[seat] else ''} "
            f"({totals[seat]})"
            for seat in range(len(players))
        ]
        lines.append("\t".join([str(k + 1), str(len(log.actions)), str(log.finisher), *cells]))
    game = cursor.game
    assert game.ranks is not None and game.winners is not None
    lines.append("final")
    lines.append("\t".join(["rank", "seat", "player", "total"]))
    for seat in sorted(range(len(players)), key=lambda s: (game.ranks[s] if game.ranks else 0, s)):
        notes = [n for n, on in (("winner", seat in game.winners), ("forfeited", seat in game.forfeits)) if on]
        name = players[seat] + (f" ({', '.join(notes)})" if notes else "")
        lines.append("\t".join([str(game.ranks[seat]), str(seat), name, str(game.totals[seat])]))
    return "\n".join(lines)
