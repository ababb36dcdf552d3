"""A human seat: :class:`HumanBot` reads actions typed by a person and shows the table with Rich.

It is an ordinary :class:`skyjo_bot.Bot`, so ``skyjo-ref play`` seats it on the
referee through the SDK client like any other bot. Input comes from an
injectable ``read(prompt) -> str`` (``Console.input`` by default) that raises
``EOFError`` at the end of input, and output goes to a Rich ``Console``: tests
drive it with scripted lines and a recording console.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.columns import Columns
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from skyjo_bot import Action, ActionKind, Bot, DecisionKind, Event, EventKind, GameResult, GameStart, View
from skyjo_bot.types import GRID_SIZE, Grid, SlotState, column_positions

from skyjo_ref.cli.replay_view import grid_table

HELP = """\
[bold]Actions[/] (positions 0-11, row by row: the small numbers in each grid)
  [bold]draw[/], [bold]d[/]         look at the top card of the draw pile
  [bold]take[/], [bold]t[/]         take the top discard (then you must swap it in)
  [bold]swap 5[/], [bold]s5[/]      put the card you hold at 5; the card there is discarded
  [bold]reveal 3[/], [bold]r3[/]    opening: turn 3 face up; after a draw: discard the
                   drawn card and turn 3 face up
  [bold]5[/]               a bare number: reveal (opening) or swap (after a take)
  [bold]help[/], [bold]quit[/]      this text; leave the game
[bold]Rules in short[/]: the lowest total wins. Three equal revealed cards in a
column are removed. The first player with no hidden card ends the round:
everyone else plays once more, and the finisher's score is penalised unless
it is strictly the lowest."""


class QuitGame(Exception):
    """The person asked to leave (``quit``, or the end of input)."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """What one line of input meant: an action, a command (help/quit), or an error with a hint."""

    action: Action | None = None
    command: str | None = None
    error: str | None = None


def describe_legal(legal: Sequence[Action]) -> str:
    """The legal actions, compactly: ``draw, take`` or ``swap 0 1 4 ...; reveal 2 7``."""
    simple = [str(a) for a in legal if a.pos is None]
    parts = list(simple)
    for kind in (ActionKind.SWAP, ActionKind.REVEAL):
        positions = [str(a.pos) for a in legal if a.kind is kind]
        if positions:
            parts.append(f"{kind.value} {' '.join(positions)}")
    return "; ".join(parts) if parts else "nothing"


_WORDS = {
    "d": ActionKind.DRAW,
    "draw": ActionKind.DRAW,
    "t": ActionKind.TAKE,
    "take": ActionKind.TAKE,
    "s": ActionKind.SWAP,
    "swap": ActionKind.SWAP,
    "r": ActionKind.REVEAL,
    "reveal": ActionKind.REVEAL,
}
_COMMANDS = {"h": "help", "help": "help", "?": "help", "q": "quit", "quit": "quit", "exit": "quit"}


def parse_input(text: str, view: View) -> Parsed:
    """Read one line typed at a decision; errors say what was wrong and list the legal actions."""
    legal = view.legal_actions
    hint = f"legal now: {describe_legal(legal)} (or help, quit)"
    words = text.strip().lower().replace(",", " ").split()
    if not words:
        return Parsed(error=f"type an action; {hint}")
    if len(words) == 1 and words[0] in _COMMANDS:
        return Parsed(command=_COMMANDS[words[0]])
    # split a glued form like "s5" or "reveal3" into word and number
    if len(words) == 1:
        head = words[0].rstrip("0123456789")
        tail = words[0][len(head) :]
        words = [w for w in (head, tail) if w]
    if len(words) > 2:
        return Parsed(error=f"cannot read {text.strip()!r}; {hint}")
    if len(words) == 1 and words[0].isdigit():
        kind = _bare_number_kind(view)
        if kind is None:
            return Parsed(
                error=f"say s{words[0]} to put your card at {words[0]}, or r{words[0]} to discard it and reveal "
                f"{words[0]}; {hint}"
            )
        words = [kind.value, words[0]]
    kind = _WORDS.get(words[0])
    if kind is None:
        return Parsed(error=f"unknown action {words[0]!r}; {hint}")
    if kind in (ActionKind.DRAW, ActionKind.TAKE):
        if len(words) != 1:
            return Parsed(error=f"{kind.value} takes no position; {hint}")
        action = Action(kind)
    else:
        if len(words) != 2 or not words[1].isdigit() or not 0 <= int(words[1]) < GRID_SIZE:
            return Parsed(error=f"{kind.value} needs a position 0-11, like {kind.value[0]}5; {hint}")
        action = Action(kind, int(words[1]))
    if action not in legal:
        return Parsed(error=f"{why_illegal(action, view)}; {hint}")
    return Parsed(action=action)


def _bare_number_kind(view: View) -> ActionKind | None:
    if view.decision is DecisionKind.OPENING_REVEAL:
        return ActionKind.REVEAL
    if view.decision is DecisionKind.SWAP_AFTER_TAKE:
        return ActionKind.SWAP
    if view.decision is DecisionKind.DRAW_OR_TAKE:
        return ActionKind.SWAP  # refused below with the reason
    return None


def why_illegal(action: Action, view: View) -> str:
    """Why a well-formed action cannot be played now, in the person's terms."""
    decision = view.decision
    if decision is DecisionKind.DRAW_OR_TAKE:
        return f"{action} is not possible yet: first draw or take a card"
    if action.kind in (ActionKind.DRAW, ActionKind.TAKE):
        then = "swap it" if decision is DecisionKind.SWAP_AFTER_TAKE else "swap it, or discard it and reveal"
        return f"you already hold a {view.hand}: now {then}"
    assert action.pos is not None
    state = view.my_grid.states[action.pos]
    if state is SlotState.REMOVED:
        return f"position {action.pos} is in a removed column"
    if action.kind is ActionKind.REVEAL and state is SlotState.REVEALED:
        return f"position {action.pos} is already face up"
    if decision is DecisionKind.OPENING_REVEAL:
        return "open two cards with reveal first"
    if decision is DecisionKind.SWAP_AFTER_TAKE and action.kind is ActionKind.REVEAL:
        return "a card taken from the discard pile must be swapped into your grid"
    return f"{action} is not possible now"


# ---------------------------------------------------------------------- rendering


def render_view(view: View, recent: Sequence[str] = ()) -> RenderableType:
    """The whole table as this seat sees it, with what happened since its last decision."""
    parts: list[RenderableType] = []
    if recent:
        parts.append(Text("Since your last move:", style="bold"))
        parts.extend(Text(f"  {line}") for line in recent)
    panels = []
    for seat, grid in enumerate(view.grids):
        who = "you" if seat == view.seat else view.players[seat]
        title = f"{seat} {who}  total {view.totals[seat]}  shown {grid.revealed_sum():+d}"
        panels.append(grid_table(grid, title, highlight=seat == view.seat, labels=True))
    parts.append(Columns(panels, padding=(0, 3)))
    top = "empty" if view.discard_top is None else str(view.discard_top)
    status = Text(f"Round {view.round + 1}  ·  discard top: ", style="")
    status.append(top, style="bold")
    status.append(f"  ·  draw pile: {view.draw_pile_size} cards")
    if view.hand is not None:
        status.append("  ·  you hold: ")
        status.append(str(view.hand), style="bold reverse")
    parts.append(status)
    if view.finisher is not None and view.finisher != view.seat:
        parts.append(
            Text(
                f"{view.players[view.finisher]} (seat {view.finisher}) has no hidden card left: this is your last turn",
                style="bold yellow",
            )
        )
    return Group(*parts)


def prompt_text(view: View) -> str:
    """The question for the decision that is due (Rich markup)."""
    hidden = " ".join(str(p) for p in view.my_grid.hidden_positions())
    decision = view.decision
    if decision is DecisionKind.OPENING_REVEAL:
        return f"Open a card: reveal POS (hidden: {hidden}) > "
    if decision is DecisionKind.DRAW_OR_TAKE:
        return f"Your turn: draw (d) or take the {view.discard_top} (t) > "
    if decision is DecisionKind.SWAP_AFTER_TAKE:
        return f"You took a {view.hand}: swap POS (s5) > "
    return f"You drew a {view.hand}: swap POS (s5), or discard it and reveal POS (r3; hidden: {hidden}) > "


def describe_event(event: Event, players: Sequence[str], me: int) -> str | None:
    """One public event in words (None for events shown elsewhere or not worth a line)."""

    def who(seat: int | None) -> str:
        if seat is None:
            return "?"
        return "you" if seat == me else f"{players[seat]} (seat {seat})"

    kind = event.kind
    if kind is EventKind.REVEAL:
        return f"{who(event.seat)} revealed {event.value} at {event.pos}"
    if kind is EventKind.DRAW:
        return f"{who(event.seat)} drew a card"
    if kind is EventKind.TAKE:
        return f"{who(event.seat)} took the {event.value} from the discard pile"
    if kind is EventKind.DISCARD:
        return f"{who(event.seat)} discarded the drawn {event.value}"
    if kind is EventKind.SWAP:
        return f"{who(event.seat)} put {event.value} at {event.pos}, discarding {event.replaced}"
    if kind is EventKind.COLUMN_CLEARED:
        return f"{who(event.seat)} cleared column {event.pos} (three {event.value}s)"
    if kind is EventKind.RESHUFFLE:
        return f"the discards were shuffled into a new draw pile of {event.value} cards"
    if kind is EventKind.TURNS_START:
        return f"{who(event.seat)} start{'' if event.seat == me else 's'} the round's turns"
    if kind is EventKind.ROUND_FINISHING:
        return f"{who(event.seat)} revealed the last hidden card: everyone else plays once more"
    return None


def round_table(event: Event, players: Sequence[str], me: int) -> Table:
    table = Table(title=f"Round {(event.round or 0) + 1} over", title_justify="left")
    table.add_column("seat", justify="right")
    table.add_column("player")
    table.add_column("cards", justify="right")
    table.add_column("score", justify="right")
    table.add_column("total", justify="right")
    for seat, name in enumerate(players):
        who = f"{name} (you)" if seat == me else name
        if seat == event.seat:
            who += " - finished"
        raw = event.raw[seat] if seat < len(event.raw) else 0
        score = event.scores[seat] if seat < len(event.scores) else raw
        note = " (penalty)" if seat == event.seat and score != raw else ""
        total = event.totals[seat] if seat < len(event.totals) else 0
        table.add_row(str(seat), escape(who), str(raw), f"{score}{note}", str(total))
    return table


def result_table(result: GameResult, players: Sequence[str], me: int) -> Table:
    table = Table(title="Game over", title_justify="left")
    table.add_column("rank", justify="right")
    table.add_column("seat", justify="right")
    table.add_column("player")
    table.add_column("total", justify="right")
    order = sorted(range(len(result.totals)), key=lambda s: (result.ranks[s], s))
    for seat in order:
        name = players[seat] if seat < len(players) else f"seat {seat}"
        notes = ["you"] if seat == me else []
        if seat in result.winners:
            notes.append("winner")
        if seat in result.forfeits:
            notes.append("forfeited")
        label = name + (f" ({', '.join(notes)})" if notes else "")
        table.add_row(str(result.ranks[seat]), str(seat), escape(label), str(result.totals[seat]))
    return table


# ---------------------------------------------------------------------- the bot


class HumanBot(Bot):
    """A seat played by a person: shows the table, asks for an action, re-asks until it is legal.

    ``quit`` or the end of input sets :attr:`quit`. With an ``on_quit``
    callback (the play command, which then ends the session) :meth:`decide`
    calls it and never returns, so no move is sent for the person; without one
    it raises :class:`QuitGame`.
    """

    name = "human"

    def __init__(
        self,
        console: Console,
        read: Callable[[str], str] | None = None,
        *,
        name: str = "you",
        on_quit: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.console = console
        self.read = read if read is not None else self._console_read
        self.on_quit = on_quit
        self.players: tuple[str, ...] = ()
        self.seat = 0
        self.games_over = 0  # counted once the game's end is on the screen
        self._games_over_changed = threading.Condition()
        self._stop_waiting = False
        self.results: list[GameResult] = []
        self.quit = threading.Event()
        self._recent: list[str] = []
        self._final_reveals: list[str] = []
        self._grids: list[Grid] | None = None  # the last view's grids, kept up to date by the events since
        self._never = threading.Event()

    def _console_read(self, prompt: str) -> str:
        line = self.console.input(prompt)
        if not sys.stdin.isatty():
            self.console.print(escape(line), highlight=False)  # echo scripted input, so the log reads well
        return line

    # hooks

    def on_game_start(self, start: GameStart) -> None:
        self.players = start.players
        self.seat = start.seat
        self._recent = []
        others = ", ".join(f"{name} (seat {s})" for s, name in enumerate(start.players) if s != start.seat)
        rules = ", ".join(f"{k}={v}" for k, v in start.rules.options().items())
        self.console.rule(f"Game {self.games_over + 1}")
        self.console.print(f"You are seat {start.seat}, against {escape(others)}.", highlight=False)
        self.console.print(f"Rules: {escape(start.rules.preset or 'custom')} ({escape(rules)})", style="dim")
        self.console.print("Type help at any prompt for the actions.", style="dim")

    def _track(self, event: Event) -> None:
        """Keep the grids of the last view up to date with what was shown since, for the round's end."""
        if self._grids is None or event.seat is None or not 0 <= event.seat < len(self._grids):
            return
        grid = self._grids[event.seat]
        states, values = list(grid.states), list(grid.values)
        if event.kind in (EventKind.REVEAL, EventKind.SWAP, EventKind.FINAL_REVEAL) and event.pos is not None:
            states[event.pos], values[event.pos] = SlotState.REVEALED, event.value
        elif event.kind is EventKind.COLUMN_CLEARED and event.pos is not None:
            for pos in column_positions(event.pos):
                states[pos], values[pos] = SlotState.REMOVED, None
        else:
            return
        self._grids[event.seat] = Grid(tuple(states), tuple(values))

    def _show_final_grids(self) -> None:
        if self._grids is None:
            return
        panels = []
        for seat, grid in enumerate(self._grids):
            who = "you" if seat == self.seat else self.players[seat] if seat < len(self.players) else f"seat {seat}"
            panels.append(grid_table(grid, f"{seat} {escape(who)}  cards {grid.revealed_sum():+d}", seat == self.seat))
        self.console.print(Text("Final grids:", style="bold"))
        self.console.print(Columns(panels, padding=(0, 3)))

    def on_event(self, event: Event) -> None:
        self._track(event)
        if event.kind is EventKind.ROUND_START:
            self._grids = None
            self._recent = []
            if event.round:
                self.console.rule(f"Round {event.round + 1}", style="dim")
            return
        if event.kind is EventKind.ROUND_END:
            self._show_recent()
            if self._final_reveals:
                self.console.print("Hidden cards turned over: " + "; ".join(self._final_reveals), highlight=False)
            self._final_reveals = []
            self._show_final_grids()
            self._grids = None
            self.console.print(round_table(event, self.players, self.seat))
            return
        if event.kind is EventKind.FINAL_REVEAL:
            who = "you" if event.seat == self.seat else self.players[event.seat or 0]
            self._final_reveals.append(f"{who}: {event.value} at {event.pos}")
            return
        if event.kind is EventKind.GAME_END:
            return
        if event.seat == self.seat and event.kind not in (EventKind.TURNS_START, EventKind.ROUND_FINISHING):
            return  # my own moves need no news
        line = describe_event(event, self.players, self.seat)
        if line is not None:
            self._recent.append(line)

    def on_game_over(self, result: GameResult) -> None:
        self.results.append(result)
        self.console.print(result_table(result, self.players, self.seat))
        if self.seat in result.winners:
            verdict = "You win!" if len(result.winners) == 1 else "You share the win!"
        else:
            verdict = f"You finished rank {result.ranks[self.seat]} of {len(result.ranks)}."
        self.console.print(verdict, style="bold")
        with self._games_over_changed:
            self.games_over += 1
            self._games_over_changed.notify_all()

    def wait_games_over(self, games: int, timeout_s: float) -> bool:
        """Block until ``games`` games' ends are on the screen (False after ``timeout_s`` or :meth:`stop_waiting`)."""
        with self._games_over_changed:
            self._games_over_changed.wait_for(lambda: self.games_over >= games or self._stop_waiting, timeout_s)
            return self.games_over >= games

    def stop_waiting(self) -> None:
        """Wake :meth:`wait_games_over` now (the client is gone: no game end will come)."""
        with self._games_over_changed:
            self._stop_waiting = True
            self._games_over_changed.notify_all()

    def _show_recent(self) -> None:
        for line in self._recent:
            self.console.print(f"  {line}", highlight=False)
        self._recent = []

    # the decision

    def decide(self, view: View) -> Action:
        if not self.players:
            self.players = view.players
            self.seat = view.seat
        self._grids = list(view.grids)
        self.console.print()
        self.console.print(render_view(view, self._recent))
        self._recent = []
        while True:
            try:
                line = self.read(prompt_text(view))
            except (EOFError, KeyboardInterrupt):
                self.console.print()
                return self._leave("end of input")
            parsed = parse_input(line, view)
            if parsed.action is not None:
                return parsed.action
            if parsed.command == "help":
                self.console.print(HELP)
                self.console.print(f"legal now: {describe_legal(view.legal_actions)}", highlight=False)
            elif parsed.command == "quit":
                return self._leave("quit")
            else:
                self.console.print(f"[red]{escape(parsed.error or '')}[/]", highlight=False)

    def _leave(self, why: str) -> Action:
        self.quit.set()
        if self.on_quit is None:
            raise QuitGame(why)
        self.on_quit()
        self._never.wait()  # the session is ending: answer nothing (this thread is a daemon)
        raise QuitGame(why)
