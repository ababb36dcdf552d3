"""Rendering for tournaments: live progress while games run, and the final tables.

On a terminal, a Rich progress bar (games done of total, rate, ETA) above a live
standings table, on stderr; elsewhere (CI logs, pipes) plain progress lines,
one every 100 games or 30 seconds (``--progress-every``, ``--progress-seconds``).
The final tables are Rich tables on a terminal and tab-separated lines elsewhere;
the head-to-head matrix has numbered columns.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from skyjo_ref.cli.plain import print_table

if TYPE_CHECKING:  # the store, its tables and the live display load when a tournament shows them, not for --help
    from rich.live import Live

    from skyjo_ref.tournament.store import StoredGame
    from skyjo_ref.tournament.tables import SizeRow, Tables


def _fmt(value: float | None, digits: int = 1, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


#: The Elo table's columns, most wanted first: on a narrow terminal the last ones give way (``--json`` has them all).
_ELO_PRIORITY: Final = (
    "bot", "Elo", "95% CI", "games", "wins", "win%", "avg\ntotal", "strikes", "forfeits", "avg\nround", "version",
)  # fmt: skip


def _model(tables: Tables) -> str:
    """The rating model's name as the tables say it (``MODEL_NAMES``)."""
    from skyjo_ref.tournament.tables import MODEL_NAMES

    return MODEL_NAMES.get(tables.model, tables.model)


def _version(version: str | None) -> str:
    """A bot version's short form, ``-`` for none."""
    from skyjo_ref.tournament.versions import short

    return short(version) if version is not None else "-"


def _elo_columns(tables: Tables, live: bool) -> dict[str, list[str]]:
    """Every column the Elo table may show, by header, with one cell per row."""
    rows = tables.rows
    columns: dict[str, list[str]] = {"bot": [r.name for r in rows], "Elo": [_fmt(r.elo, 0) for r in rows]}
    if not live and tables.bootstrap:
        columns["95% CI"] = [
            "-" if r.elo_low is None or r.elo_high is None else f"{r.elo_low:.0f}-{r.elo_high:.0f}" for r in rows
        ]
    columns["games"] = [str(r.games) for r in rows]
    columns["wins"] = [f"{r.wins:g}" for r in rows]
    columns["win%"] = [_fmt(None if r.win_rate is None else 100 * r.win_rate, 1) for r in rows]
    columns["avg\ntotal"] = [_fmt(r.avg_total, 1) for r in rows]
    columns["avg\nround"] = [_fmt(r.avg_round, 2) for r in rows]
    if not live:
        columns["strikes"] = [str(r.strikes) for r in rows]
        columns["forfeits"] = [str(r.forfeits) for r in rows]
        if any(r.version is not None for r in rows):
            columns["version"] = [_version(r.version) for r in rows]
    return columns


def _elo_grid(title: str | None, caption: str | None, columns: dict[str, list[str]], shown: list[str]) -> Table:
    table = Table(
        title=title,
        caption=caption,
        caption_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    order = [name for name in columns if name in shown]  # the usual left-to-right order
    for name in order:
        table.add_column(name, justify="left" if name in ("bot", "version") else "right", no_wrap=True)
    for i in range(len(columns["bot"])):
        table.add_row(*(columns[name][i] for name in order))
    return table


def elo_table(tables: Tables, title: str | None = None, live: bool = False, width: int | None = None) -> Table:
    """The Elo table: one row per bot, best first. Within ``width`` columns (a terminal's), the columns that do not
    fit are left out, least wanted first (:data:`_ELO_PRIORITY`), so no number is ever cut; the caption says which,
    and the versions, when their column gave way, are listed beneath."""
    anchor = f"{tables.anchor} = {tables.anchor_elo:g}" if tables.anchor else f"pool mean = {tables.anchor_elo:g}"
    model = _model(tables)
    caption = None if live else f"{model} Elo ({anchor}); {tables.games} games in {tables.blocks} duplicate blocks"
    columns = _elo_columns(tables, live)
    shown: list[str] = [name for name in _ELO_PRIORITY if name in columns]
    measure = Console(width=10**4, color_system=None, file=io.StringIO())
    while width is not None and len(shown) > 2:
        if measure.measure(_elo_grid(title, None, columns, shown)).maximum <= width:
            break
        shown.pop()
    left_out = [name.replace("\n", " ") for name in columns if name not in shown and name != "version"]
    if caption is not None and left_out:
        caption += f"; not shown at this width: {', '.join(left_out)} (--json has every column)"
    if caption is not None and "version" in columns and "version" not in shown:
        caption += "\nversions (the games column's):" + "".join(
            f"\n  {bot} {version}" for bot, version in zip(columns["bot"], columns["version"])
        )
    return _elo_grid(title, caption, columns, shown)


#: Width of one head-to-head score column ("100" and its padding).
_H2H_CELL = 5


def _h2h_cell(tables: Tables, a: str, b: str) -> str:
    cell = tables.head_to_head.get(a, {}).get(b)
    return "" if a == b else "-" if cell is None or cell.score is None else f"{100 * cell.score:.0f}"


def head_to_head_tables(tables: Tables, width: int) -> list[Table]:
    """Row bot's pairwise score against column bot, in % (a draw counts half).

    Columns are numbered, and the rows, numbered the same way, are the legend:
    the matrix stays readable at 12 or 40 bots with long names. When the
    columns do not fit ``width``, they are split into several tables (columns
    1-15, 16-30, ...), each with the numbered rows."""
    names = [r.name for r in tables.rows]
    label = max((len(f"{i + 1} {n}") for i, n in enumerate(names)), default=4)
    per_table = max(1, (width - label - 4) // _H2H_CELL)
    out: list[Table] = []
    for start in range(0, len(names), per_table):
        columns = range(start, min(len(names), start + per_table))
        last = start + per_table >= len(names)
        table = Table(
            title="head to head" if start == 0 else f"head to head (columns {start + 1}-{columns[-1] + 1})",
            caption="row's pairwise score % against column number (draws half); games per pair in --json"
            if last
            else None,
            caption_justify="left",
            header_style="bold",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            collapse_padding=True,
        )
        table.add_column("", no_wrap=True, min_width=label)
        for j in columns:
            table.add_column(str(j + 1), justify="right", no_wrap=True, min_width=3)
        for i, a in enumerate(names):
            table.add_row(f"{i + 1} {a}", *(_h2h_cell(tables, a, names[j]) for j in columns))
        out.append(table)
    return out


def head_to_head_table(tables: Tables) -> Table:
    """The whole head-to-head matrix as one table (numbered columns)."""
    return head_to_head_tables(tables, width=10**6)[0]


def _percent(share: float | None) -> str:
    return _fmt(None if share is None else 100 * share, 1)


def _size_cells(r: SizeRow) -> list[str]:
    elo = [_fmt(r.elo, 0), _fmt(r.elo_low, 0), _fmt(r.elo_high, 0)]
    return [r.name, *elo, str(r.games), _percent(r.win_rate), _fmt(r.avg_total, 1)]


def size_tables(tables: Tables) -> list[Table]:
    """A league of mixed table sizes: each size's own Elo table (from that size's games alone)."""
    model = _model(tables)
    out = []
    for k, rows in sorted(tables.by_size.items()):
        table = Table(
            title=f"{k} players",
            caption=f"{model} Elo from the {k}-player games alone",
            caption_justify="left",
            header_style="bold",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            collapse_padding=True,
        )
        for name in ("bot", "Elo", "95% CI", "games", "win%", "avg total"):
            table.add_column(name, justify="left" if name == "bot" else "right", no_wrap=True)
        for r in rows:
            ci = "-" if r.elo_low is None or r.elo_high is None else f"{r.elo_low:.0f}-{r.elo_high:.0f}"
            table.add_row(r.name, _fmt(r.elo, 0), ci, str(r.games), _percent(r.win_rate), _fmt(r.avg_total, 1))
        out.append(table)
    return out


def _plain_tables(console: Console, tables: Tables, title: str) -> None:
    """Tab-separated lines for pipes and CI logs: no boxes, every number."""
    anchor = f"{tables.anchor} = {tables.anchor_elo:g}" if tables.anchor else f"pool mean = {tables.anchor_elo:g}"
    columns = ["bot", "Elo", "Elo_low", "Elo_high", "games", "wins", "win%", "avg_total", "avg_round"]
    columns += ["strikes", "forfeits"]
    versioned = any(row.version is not None for row in tables.rows)
    if versioned:
        columns.append("version")  # the current version's (its games are the games column)
    rows = [
        [
            row.name,
            _fmt(row.elo, 0),
            _fmt(row.elo_low, 0),
            _fmt(row.elo_high, 0),
            str(row.games),
            f"{row.wins:g}",
            _fmt(None if row.win_rate is None else 100 * row.win_rate, 1),
            _fmt(row.avg_total, 1),
            _fmt(row.avg_round, 2),
            str(row.strikes),
            str(row.forfeits),
            *([_version(row.version)] if versioned else []),
        ]
        for row in tables.rows
    ]
    model = _model(tables)
    heading = f"{title}: {model} Elo ({anchor}); {tables.games} games in {tables.blocks} duplicate blocks"
    print_table(console, heading, columns, rows)
    for k, size_rows in sorted(tables.by_size.items()):
        console.print("", markup=False)
        print_table(
            console,
            f"{k} players: {model} Elo from the {k}-player games alone",
            ["bot", "Elo", "Elo_low", "Elo_high", "games", "win%", "avg_total"],
            [_size_cells(r) for r in size_rows],
        )
    if len(tables.rows) > 1:
        names = [r.name for r in tables.rows]
        matrix = [[str(i + 1), a, *(_h2h_cell(tables, a, b) for b in names)] for i, a in enumerate(names)]
        console.print("", markup=False)
        print_table(
            console,
            "head to head: row's pairwise score % against column number (draws half)",
            ["#", "bot", *(str(j + 1) for j in range(len(names)))],
            matrix,
            left=2,
        )


def render_tables(console: Console, tables: Tables, title: str) -> None:
    if not console.is_terminal:
        _plain_tables(console, tables, title)
    else:
        console.print(elo_table(tables, title=title, width=console.width))
        for table in size_tables(tables):
            console.print(table)
        if len(tables.rows) > 1:
            for table in head_to_head_tables(tables, console.width):
                console.print(table)
    for note in tables.notes:
        console.print(f"note: {note}", highlight=False, markup=False)


class RichObserver:
    """A progress bar and a live standings table (a terminal on stderr).

    The standings are recomputed from the store in a background thread, at
    most once every ``refresh_s``: never on the event loop, where the
    in-process referee keeps the bots' clocks.
    """

    def __init__(self, console: Console, standings: Callable[[], Tables], refresh_s: float = 1.0) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.console = console
        self.standings = standings
        self.refresh_s = refresh_s
        self.progress = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task = self.progress.add_task("games", total=None, rate="")
        self.live: Live | None = None
        self._table: RenderableType = Text("")
        self._t0 = time.monotonic()
        self._played = 0
        self._dirty = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def started(self, total: int, done: int, to_play: int) -> None:
        self.progress.update(self.task, total=total, completed=done)
        self._t0 = time.monotonic()
        self._table = elo_table(self.standings(), live=True, width=self.console.width)
        if to_play:
            from rich.live import Live

            self.live = Live(self._group(), console=self.console, refresh_per_second=4, transient=True)
            self.live.start()
            self._thread = threading.Thread(target=self._refresh, name="standings", daemon=True)
            self._thread.start()

    def _group(self) -> Group:
        return Group(self.progress, self._table)

    def _refresh(self) -> None:
        while not self._stopping.is_set():
            self._dirty.wait()
            if self._stopping.is_set():
                return
            self._dirty.clear()
            t0 = time.monotonic()
            self._table = elo_table(self.standings(), live=True, width=self.console.width)
            if self.live is not None:
                self.live.update(self._group())
            # a big store takes a while to rate: never spend more than a tenth of the time on it
            self._stopping.wait(max(self.refresh_s, 10 * (time.monotonic() - t0)))

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        self._played += 1
        rate = self._played / max(time.monotonic() - self._t0, 1e-9)
        self.progress.update(self.task, completed=done, rate=f"{rate:.2f} games/s")
        self._dirty.set()

    def note(self, message: str) -> None:
        self.console.print(f"note: {message}", highlight=False)

    def stop(self) -> None:
        self._stopping.set()
        self._dirty.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self.live is not None:
            self.live.stop()
            self.live = None


#: Off a terminal: a progress line every this many finished games, or once this many seconds passed.
PROGRESS_EVERY_GAMES: Final = 100
PROGRESS_EVERY_S: Final = 30.0


class LineObserver:
    """Plain progress lines for logs that are not terminals, thinned out: one every ``every_games``
    finished games or ``every_s`` seconds (whichever comes first), and the last game's, so an
    80,000-game league writes hundreds of lines, not 80,000. A game with a forfeit gets its own line.
    ``every_games=1`` gives one line per game, naming its seats and scores."""

    def __init__(
        self, console: Console, every_games: int = PROGRESS_EVERY_GAMES, every_s: float = PROGRESS_EVERY_S
    ) -> None:
        self.console = console
        self.every_games = max(1, every_games)
        self.every_s = every_s
        self._t0 = time.monotonic()
        self._played = 0
        self._width = 1
        self._last_played = 0
        self._last_time = self._t0
        self._forfeits = 0
        self._strikes = 0

    def started(self, total: int, done: int, to_play: int) -> None:
        self._t0 = self._last_time = time.monotonic()
        self._width = len(str(total))
        self.console.print(
            f"tournament: {total} games scheduled, {done} already stored, {to_play} to play", highlight=False
        )

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        self._played += 1
        self._strikes += sum(s.strikes for s in game.seats)
        forfeit = any(s.forfeit for s in game.seats)
        self._forfeits += int(forfeit)
        now = time.monotonic()
        due = (
            self._played - self._last_played >= self.every_games
            or now - self._last_time >= self.every_s
            or done == total
            or forfeit
        )
        if not due:
            return
        self._last_played, self._last_time = self._played, now
        rate = self._played / max(now - self._t0, 1e-9)
        eta = (total - done) / rate if rate > 0 else 0.0
        if self.every_games == 1 or forfeit:
            seats = ", ".join(f"{s.bot} {s.total}" + (" (forfeit)" if s.forfeit else "") for s in game.seats)
            what = f"deal {game.id.deal} rotation {game.id.rotation}: {seats}; won by {'+'.join(game.winners)}"
        else:
            what = f"{100 * done / max(total, 1):.1f}% done; {self._strikes} strikes, {self._forfeits} forfeits"
        self.console.print(
            f"[{done:>{self._width}}/{total}] {what} ({rate:.2f} games/s, ETA {eta:.0f} s)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )

    def note(self, message: str) -> None:
        self.console.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)

    def stop(self) -> None:
        pass
