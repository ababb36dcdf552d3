"""``skyjo-ref replay``: show a game record, step through it, or check records.

Exit codes: 0 shown / every record valid; 1 a record is invalid (the message
starts with ``round K, action I: ``, counted from 0 as in the record); 2 a file
is missing, unreadable or not JSON, or the arguments are wrong; 130 Ctrl-C.

Rounds and actions are counted from 1 in what is shown and in ``--round`` /
``--action``; records (and ``--check``'s messages about them) count from 0.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from skyjo_ref import records
from skyjo_ref.cli import errors
from skyjo_ref.cli.plain import console as cli_console
from skyjo_ref.cli.replay_view import ReplayCursor, render_position, render_summary, summary_lines

HELP_KEYS = "Enter next action · p previous · n next round · NUMBER jump to round · q quit"


def register(app: typer.Typer) -> None:
    app.command(
        "replay",
        help="Show a game record (skyjo-game/1), step through it, --check records, or write its --html viewer.",
    )(replay)


def replay(
    files: Annotated[
        list[Path],
        typer.Argument(help="Record file(s); several only with --check.", show_default=False, metavar="FILE"),
    ],
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Replay each file through the rules engine; one line per file, exit 1 if any is invalid."
        ),
    ] = False,
    round_: Annotated[
        int | None,
        typer.Option("--round", metavar="K", help="Show round K (1 = the first): its final position and every action."),
    ] = None,
    action: Annotated[
        int | None,
        typer.Option(
            "--action", metavar="I", help="With --round: the position after action I (1 = the first) of that round."
        ),
    ] = None,
    html: Annotated[
        bool, typer.Option("--html", help="Write the report's game viewer for this record as one HTML page.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="With --html: the page to write (default: FILE.html)."),
    ] = None,
    interactive: Annotated[
        bool | None,
        typer.Option(
            "--interactive/--no-interactive",
            help="Step through the game reading keys from stdin (default: when stdin and stdout are terminals).",
            show_default=False,
        ),
    ] = None,
) -> None:
    if check:
        if round_ is not None or action is not None or interactive:
            raise errors.UserError("--check replays whole files: it takes no --round, --action or --interactive")
        raise typer.Exit(check_files(files))
    if len(files) != 1:
        raise errors.UserError(f"replay shows one record at a time, got {len(files)} files (use --check for several)")
    if output is not None and not html:
        raise errors.UserError("--output is where --html writes its page: add --html")
    cursor = _open(files[0])
    if html:
        if round_ is not None or action is not None or interactive:
            raise errors.UserError(
                "--html writes the whole game's viewer: it takes no --round, --action or --interactive"
            )
        write_html(cursor, files[0], output)
        return
    console = cli_console(highlight=False)
    plain = not console.is_terminal  # a pipe or a log: no boxes
    if action is not None and round_ is None:
        raise errors.UserError("--action I needs --round K: actions count from 1 within a round")
    if round_ is not None:
        if not 1 <= round_ <= cursor.num_rounds:
            raise errors.UserError(f"--round {round_}: this game has rounds 1 to {cursor.num_rounds}")
        total = cursor.actions_in(round_ - 1)
        if action is not None and not 1 <= action <= total:
            raise errors.UserError(f"--action {action}: round {round_} has actions 1 to {total}")
        done = total if action is None else action
        console.print(render_position(cursor, cursor.position(round_ - 1, done), log_lines=None, plain=plain))
        return
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        try:
            step_through(cursor, console)
        except KeyboardInterrupt:  # Ctrl-C while stepping: interrupted, like every command
            console.print()
            raise typer.Exit(errors.EXIT_INTERRUPTED) from None
    elif plain:
        typer.echo(summary_lines(cursor))
    else:
        console.print(render_summary(cursor))


def write_html(cursor: ReplayCursor, path: Path, output: Path | None) -> None:
    """The report's viewer for one (valid) record, as a page of its own."""
    from skyjo_ref.cli.report_cmd import check_output
    from skyjo_ref.report import write_game

    target = output if output is not None else path.with_suffix(".html")
    check_output(target)
    try:
        write_game(cursor.record, path.stem, target)
    except OSError as exc:
        raise errors.UserError(f"--output {target}: cannot write: {exc.strerror or exc}") from None
    typer.echo(f"{target}: the viewer of {path}", err=True)


def _open(path: Path) -> ReplayCursor:
    try:
        record = records.load(path)
    except records.RecordError as exc:
        raise errors.UserError(str(exc)) from None
    try:
        return ReplayCursor(record)
    except records.RecordError as exc:
        # bad input (exit 2): exit 1 is replay --check's answer that a record is invalid
        raise errors.UserError(f"{path}: invalid record: {exc}") from None


def check_files(files: list[Path]) -> int:
    """One line per file; 0 all valid, 1 some invalid, 2 some unreadable or not JSON."""
    out = Console(highlight=False, soft_wrap=True)
    code = errors.EXIT_OK
    for path in files:
        try:
            record: dict[str, Any] = records.load(path)
        except records.RecordError as exc:
            out.print(Text(f"{exc}"))
            code = errors.EXIT_USAGE
            continue
        try:
            game = records.replay(record)
        except records.RecordError as exc:
            out.print(Text(f"{path}: invalid: {exc}"))
            code = max(code, errors.EXIT_CHECK_FAILED)
            continue
        winners = ", ".join(game.players[s] for s in game.winners or [])
        out.print(Text(f"{path}: ok ({len(game.rounds)} rounds, {game.num_players} players, won by {winners})"))
    if code == errors.EXIT_CHECK_FAILED:
        typer.echo("note: rounds and actions in these messages count from 0, as in the record", err=True)
    return code


def step_through(cursor: ReplayCursor, console: Console) -> None:
    """The interactive mode: one position at a time, keys read a line at a time from stdin."""
    round_index, done = 0, 0
    clear = console.is_terminal
    message = ""
    while True:
        if clear:
            console.clear()
        console.print(render_position(cursor, cursor.position(round_index, done), plain=not clear))
        if message:
            console.print(Text(message, style="yellow"))
            message = ""
        console.print(Text(HELP_KEYS, style="dim"))
        line = sys.stdin.readline()  # Ctrl-C raises KeyboardInterrupt: the caller exits 130
        if not line:  # end of input
            return
        key = line.strip().lower()
        last_round = cursor.num_rounds - 1
        if key in ("q", "quit"):
            return
        if key == "":
            if done < cursor.actions_in(round_index):
                done += 1
            elif round_index < last_round:
                round_index, done = round_index + 1, 0
            else:
                message = "end of the game"
        elif key == "p":
            if done > 0:
                done -= 1
            elif round_index > 0:
                round_index -= 1
                done = cursor.actions_in(round_index)
            else:
                message = "start of the game"
        elif key == "n":
            if round_index < last_round:
                round_index, done = round_index + 1, 0
            else:
                message = "this is the last round"
        elif key.isdigit():  # rounds are counted from 1 for people
            wanted = int(key)
            if 1 <= wanted <= last_round + 1:
                round_index, done = wanted - 1, 0
            else:
                message = f"no round {wanted}: rounds 1 to {last_round + 1}"
        else:
            message = f"unknown key {key!r}: {HELP_KEYS}"
