"""Tables for people on a terminal, plain lines for pipes and CI logs.

On a terminal a table is drawn with Rich; anywhere else (a pipe, a file, a CI
log) it is one line per row, cells separated by tabs, after a header line, with
no box characters and no colour: ``cut -f`` and ``awk -F'\\t'`` read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def console(*, stderr: bool = False, **options: Any) -> Console:
    """A console for a command's lines: on a terminal as Rich draws it; anywhere else (a pipe, a file, a CI log)
    never hard-wrapped at 80 columns, so paths and commands stay whole lines that can be pasted and grepped."""
    made = Console(stderr=stderr, **options)
    if not made.is_terminal:
        made.soft_wrap = True
    return made


def print_table(
    console: Console,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    left: int = 1,
) -> None:
    """A titled table: Rich on a terminal, tab-separated lines otherwise (the first ``left`` columns left-aligned)."""
    if console.is_terminal:
        table = Table(title=title or None)
        for i, column in enumerate(columns):
            table.add_column(column, justify="left" if i < left else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    lines = ([title] if title else []) + ["\t".join(columns)] + ["\t".join(row) for row in rows]
    console.file.write("\n".join(lines) + "\n")  # as is: Rich would turn the tabs into spaces
