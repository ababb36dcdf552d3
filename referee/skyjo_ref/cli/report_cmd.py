"""``skyjo-ref report RUN``: one static HTML file of a tournament's results (see docs/report.md).

Exit codes: 0 written; 2 RUN is not a results store, or the output cannot be written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skyjo_ref.cli import errors

MIB = 1024 * 1024


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def check_output(output: Path, flag: str = "--output") -> None:
    """Refuse an HTML target that cannot be written, before any work."""
    if output.is_dir():
        raise errors.UserError(f"{flag} {output}: is a folder; expected a file name such as report.html")
    if not output.parent.is_dir():
        raise errors.UserError(f"{flag} {output}: folder {output.parent} does not exist")


def report(
    run: Annotated[
        Path, typer.Argument(metavar="RUN", help="A tournament's (or gate's, or merged) output folder: results.sqlite.")
    ],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Where to write the page (default: RUN/report.html)."),
    ] = None,
    bootstrap: Annotated[
        int | None, typer.Option(min=0, help="Bootstrap resamples for the intervals (default: as the run's config).")
    ] = None,
    embed_mib: Annotated[
        float,
        typer.Option(
            "--embed-mib",
            min=0.0,
            metavar="MIB",
            help="Game records carried in the page: this many MiB, and a game of every pair of bots up to 4x it "
            "(0: none); the others open from RUN/games/.",
        ),
    ] = 3.0,
) -> None:
    """Write one offline HTML page: leaderboard, head-to-head, rating history, per bot, gate, game viewer."""
    from skyjo_ref.report import ReportOptions, write_report  # the templates load when a page is written
    from skyjo_ref.tournament.store import DB_NAME

    if not run.is_dir():
        raise errors.UserError(f"{run}: no such folder: expected a tournament output folder holding {DB_NAME}")
    target = output if output is not None else run / "report.html"
    check_output(target)
    try:
        data = write_report(run, target, ReportOptions(bootstrap=bootstrap, record_budget=int(embed_mib * MIB)))
    except OSError as exc:
        raise errors.UserError(f"--output {target}: cannot write: {exc.strerror or exc}") from None
    size = target.stat().st_size
    typer.echo(
        f"{target}: {data['games_count']} games, {len(data['bots'])} bots, "
        f"{len(data['embedded'])} records carried, {size / MIB:.2f} MiB",
        err=True,
    )
