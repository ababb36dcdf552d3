"""``skyjo-ref merge OUT STORE...``: join the stores of a sharded tournament (or gate) into one.

Exit codes: 0 merged; 2 a store that is missing, not a store, or of another tournament
(the message names what differs); 3 a game stored twice with different results (kept once);
5 ``--fail-on`` found a bot that forfeited, was struck or crashed in the merged games; 6 another run
writes to OUT (the message names it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from skyjo_ref.cli import errors, markdown
from skyjo_ref.cli.failon import FailOnOption, check_fail_on, fail_message, raise_if_failed
from skyjo_ref.cli.markdown import MarkdownOption, check_markdown_target
from skyjo_ref.cli.tournament_cmd import store_tables, waiting_note


def register(app: typer.Typer) -> None:
    app.command("merge")(merge_command)


def merge_command(
    out: Annotated[Path, typer.Argument(metavar="OUT", help="The merged store's folder (created if needed).")],
    stores: Annotated[
        list[Path],
        typer.Argument(metavar="STORE...", help="Output folders of the shards to merge.", show_default=False),
    ],
    markdown_file: MarkdownOption = None,
    fail_on: FailOnOption = None,
) -> None:
    """Merge shard stores (and their game records) into OUT; a game stored in two shards is kept once.

    Then `skyjo-ref ratings OUT` prints the tables of the whole tournament.
    """
    from skyjo_ref.tournament.shard import merge  # the stores (SQLite) load when they are merged, not for --help

    stderr = Console(stderr=True, soft_wrap=True)
    check_markdown_target(markdown_file)
    fail_kinds = check_fail_on(fail_on)
    if out.exists() and not out.is_dir():
        raise errors.UserError(f"{out}: exists and is not a folder: expected a folder for the merged store")
    summary = merge(out, stores, on_wait=waiting_note(stderr))  # StoreBusy (6), ShardError, StoreError (2)
    stderr.print(
        f"merged {summary.stores} stores into {out}: {summary.added} games added, "
        f"{summary.duplicates} already there (kept once), {summary.records_copied} record files copied",
        highlight=False,
    )
    failed = _summarise(out, markdown_file, fail_kinds, summary.stores)
    if summary.conflicts:
        shown = ", ".join(summary.conflicts[:5]) + (" ..." if len(summary.conflicts) > 5 else "")
        raise errors.Unfinished(
            f"{len(summary.conflicts)} games (or adaptive rounds) were stored twice with different contents "
            f"(the first was kept): {shown}"
        )
    raise_if_failed(failed)


def _summarise(out: Path, markdown_file: Path | None, fail_kinds: frozenset[str], stores: int) -> str | None:
    """The merged store's Markdown summary (a gate's verdict first) and the ``--fail-on`` message, if any."""
    if markdown_file is None and not fail_kinds:
        return None
    from skyjo_ref.tournament.incidents import incidents
    from skyjo_ref.tournament.store import Store

    store = Store(out, create=False)
    try:
        found = incidents(store)
        failed = fail_message(found, fail_kinds)
        if markdown_file is not None:
            tables = store_tables(store, out)
            name = store.info("name") or out.name
            text = markdown.summary(
                f"{name}: Elo (merged from {stores} stores)",
                tables,
                found,
                gate=markdown.gate_section(store.info("gate")),
                facts={"merged store": f"`{out}`"},
                failed=failed,
            )
            markdown.write_markdown(markdown_file, text)
        return failed
    finally:
        store.close()
