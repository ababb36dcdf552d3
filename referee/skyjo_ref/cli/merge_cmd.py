"""``skyjo-ref merge OUT STORE...``: join the stores of a sharded tournament (or gate) into one.

Exit codes: 0 merged; 2 a store that is missing, not a store, or of another tournament
(the message names what differs); 3 a game stored twice with different results (kept once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from skyjo_ref.cli import errors
from skyjo_ref.tournament.shard import ShardError, merge


def register(app: typer.Typer) -> None:
    app.command("merge")(merge_command)


def merge_command(
    out: Annotated[Path, typer.Argument(metavar="OUT", help="The merged store's folder (created if needed).")],
    stores: Annotated[
        list[Path],
        typer.Argument(metavar="STORE...", help="Output folders of the shards to merge.", show_default=False),
    ],
) -> None:
    """Merge shard stores (and their game records) into OUT; a game stored in two shards is kept once.

    Then `skyjo-ref ratings OUT` prints the tables of the whole tournament.
    """
    stderr = Console(stderr=True, soft_wrap=True)
    if out.exists() and not out.is_dir():
        raise errors.UserError(f"{out}: exists and is not a folder: expected a folder for the merged store")
    try:
        summary = merge(out, stores)
    except ShardError as exc:
        raise errors.UserError(str(exc)) from None
    stderr.print(
        f"merged {summary.stores} stores into {out}: {summary.added} games added, "
        f"{summary.duplicates} already there (kept once), {summary.records_copied} record files copied",
        highlight=False,
    )
    if summary.conflicts:
        shown = ", ".join(summary.conflicts[:5]) + (" ..." if len(summary.conflicts) > 5 else "")
        raise errors.Unfinished(
            f"{len(summary.conflicts)} games were stored twice with different records (the first was kept): {shown}"
        )
