"""Markdown summaries for CI pages (GitHub's step summary), shared by ``tournament``, ``ratings``, ``merge``, ``gate``.

One renderer so every command's summary reads the same: a gate's verdict first
(when the store is a gate's), a line naming every bot that forfeited, was
struck or crashed, the leaderboard with intervals, the head-to-head matrix
(numbered columns, the numbered rows are the legend, folded in ``<details>``
so 40 or 100 bots stay readable), then the faults table. GitHub keeps at most
1 MiB of a step's summary; a 100-bot league's summary is far under it, and the
writer cuts anything longer at a line, saying so.

``--markdown FILE`` overwrites FILE, except when FILE is ``$GITHUB_STEP_SUMMARY``
(other steps may have written to it), which is appended to; ``-`` is stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from skyjo_ref.cli import errors

if TYPE_CHECKING:  # the store and its tables load when a summary is written, not for a command's --help
    from skyjo_ref.tournament.incidents import BotIncidents
    from skyjo_ref.tournament.tables import Tables

#: ``--markdown FILE`` as every command that writes a summary takes it.
MarkdownOption = Annotated[
    Path | None,
    typer.Option(
        "--markdown",
        metavar="FILE",
        help='Write a Markdown summary (appended when FILE is "$GITHUB_STEP_SUMMARY"; -: stdout).',
    ),
]

#: GitHub's step summary holds at most 1 MiB (per step).
MARKDOWN_LIMIT: Final = 1024 * 1024
_CUT_NOTE: Final = "\n*(summary cut here: GitHub keeps at most 1 MiB; the JSON and the report have everything)*\n"


def check_markdown_target(path: Path | None, json_file: Path | None = None) -> None:
    """Refuse a ``--markdown`` file that cannot be written (or stdout twice), before any game is played."""
    if path is not None and json_file is not None and str(path) == str(json_file) == "-":
        raise errors.UserError("--json - and --markdown -: only one of them can be stdout; give the other a file")
    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise errors.UserError(f"--markdown {path}: is a folder; expected a file name (or - for stdout)")
    if not path.parent.is_dir():
        raise errors.UserError(f"--markdown {path}: folder {path.parent} does not exist")


def is_step_summary(path: Path) -> bool:
    """Whether ``path`` is GitHub's ``$GITHUB_STEP_SUMMARY`` (appended to, never replaced)."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return bool(summary) and Path(str(summary)).resolve() == path.resolve()


def fit(text: str, limit: int = MARKDOWN_LIMIT) -> str:
    """``text``, or its first lines under ``limit`` bytes (UTF-8) with a note saying it was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    budget = limit - len(_CUT_NOTE.encode("utf-8"))
    head = data[:budget].decode("utf-8", errors="ignore")
    return head[: head.rfind("\n") + 1] + _CUT_NOTE


def write_markdown(path: Path, text: str) -> None:
    """Write (or append to the step summary) ``text``, within GitHub's limit; ``-``: stdout."""
    text = fit(text)
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    mode = "a" if is_step_summary(path) else "w"
    try:
        with path.open(mode, encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise errors.UserError(f"--markdown {path}: cannot write: {exc.strerror or exc}") from None


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell (no pipes, no line breaks)."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def code(name: str) -> str:
    """A bot name as inline code (backticks in it cannot end the span)."""
    return f"`{cell(name).replace('`', chr(39))}`"


def _num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def incidents_line(found: Mapping[str, BotIncidents]) -> str | None:
    """One line naming every bot with forfeits, strikes or crashes (None when all played clean)."""
    bad = [entry for entry in found.values() if entry.kinds]
    if not bad:
        return None
    names = "; ".join(f"{code(entry.bot)} {entry.describe()}" for entry in bad)
    return f"> ⚠️ **{len(bad)} bot{'s' if len(bad) != 1 else ''} with faults**: {names}"


def leaderboard(tables: Tables, found: Mapping[str, BotIncidents]) -> list[str]:
    """Rank, bot, Elo with its 95% interval, games, wins, averages, and the bot's faults at a glance."""
    interval = bool(tables.bootstrap)
    header = ["#", "bot", "Elo"] + (["95% CI"] if interval else []) + ["games", "win %", "avg total", "faults"]
    aligns = ["--:", "---"] + ["--:"] * (len(header) - 3) + ["---"]  # numbers right, names and faults left
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(aligns) + "|"]
    for rank, row in enumerate(tables.rows, 1):
        entry = found.get(row.name)
        faults = f"⚠️ {entry.describe()}" if entry is not None and entry.kinds else ""
        if entry is not None and not entry.kinds and entry.describe():
            faults = entry.describe()
        cells = [str(rank), code(row.name), _num(row.elo)]
        if interval:
            cells.append("-" if row.elo_low is None else f"{row.elo_low:.0f} to {_num(row.elo_high)}")
        cells += [
            str(row.games),
            _num(None if row.win_rate is None else 100 * row.win_rate, 1),
            _num(row.avg_total, 1),
            cell(faults),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def head_to_head(tables: Tables) -> list[str]:
    """The matrix with numbered columns; each row starts with its number and bot (the legend)."""
    names = [row.name for row in tables.rows]
    if len(names) < 2:
        return []
    lines = [
        "<details" + (" open" if len(names) <= 12 else "") + "><summary>Head to head: the row's pairwise score % "
        "against the column's bot (by number; draws count half)</summary>",
        "",
        "| # | bot | " + " | ".join(str(j) for j in range(1, len(names) + 1)) + " |",
        "|--:|---|" + "--:|" * len(names),
    ]
    for i, a in enumerate(names, 1):
        row = tables.head_to_head.get(a, {})
        cells = []
        for b in names:
            h2h = row.get(b)
            cells.append("" if a == b else "-" if h2h is None or h2h.score is None else f"{100 * h2h.score:.0f}")
        lines.append(f"| {i} | {code(a)} | " + " | ".join(cells) + " |")
    lines += ["", "</details>"]
    return lines


def faults_table(found: Mapping[str, BotIncidents]) -> list[str]:
    """Per bot with anything to report: forfeits, strikes (by reason), crashes, and its first failure."""
    if not found:
        return []
    lines = ["| bot | forfeits | strikes | crashes | first failure |", "|---|--:|--:|--:|---|"]
    for entry in found.values():
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(entry.reasons.items()))
        strikes = f"{entry.strikes}" + (f" ({reasons})" if reasons else "")
        first = entry.first_failure or entry.first_crash or ", ".join(f"{n} {k}" for k, n in entry.other_faults.items())
        if len(first) > 200:
            first = first[:197] + "..."
        lines.append(f"| {code(entry.bot)} | {entry.forfeits} | {cell(strikes)} | {entry.crashes} | {cell(first)} |")
    return lines


def summary(
    title: str,
    tables: Tables,
    found: Mapping[str, BotIncidents],
    *,
    gate: str | None = None,
    facts: Mapping[str, Any] | None = None,
    stopped: str | None = None,
    failed: str | None = None,
) -> str:
    """A whole summary: the gate's section first (``gate``, already Markdown), then the league's."""
    from skyjo_ref.tournament.tables import MODEL_NAMES

    out: list[str] = []
    if gate:
        out += [gate.rstrip("\n"), ""]
    out += [f"## {cell(title)}", ""]
    if stopped:
        out += [f"> ⏸️ **Stopped before the end**: {cell(stopped)}", ""]
    if failed:
        out += [f"> ❌ **{cell(failed)}**", ""]
    line = incidents_line(found)
    out += [line or "✅ No bot forfeited, was struck or crashed.", ""]
    anchor = f"`{tables.anchor}` = {tables.anchor_elo:g}" if tables.anchor else f"pool mean = {tables.anchor_elo:g}"
    model = MODEL_NAMES.get(tables.model, tables.model)
    about = f"{tables.games} games in {tables.blocks} duplicate blocks; {model} Elo ({anchor})"
    if tables.bootstrap:
        about += f", 95% intervals from {tables.bootstrap} bootstrap resamples of the blocks"
    out += [about + ".", ""]
    if facts:
        out += [" · ".join(f"{key}: {cell(value)}" for key, value in facts.items()), ""]
    out += ["### Leaderboard", "", *leaderboard(tables, found), ""]
    for k, rows in sorted(tables.by_size.items()):
        out += [f"### {k} players ({model} Elo from the {k}-player games alone)", ""]
        out += ["| bot | Elo | 95% CI | games | win% | avg total |", "|---|--:|--:|--:|--:|--:|"]
        for r in rows:
            ci = "-" if r.elo_low is None or r.elo_high is None else f"{_num(r.elo_low)} to {_num(r.elo_high)}"
            win = "-" if r.win_rate is None else f"{100 * r.win_rate:.1f}"
            total = "-" if r.avg_total is None else f"{r.avg_total:.1f}"
            out.append(f"| {code(r.name)} | {_num(r.elo)} | {ci} | {r.games} | {win} | {total} |")
        out.append("")
    matrix = head_to_head(tables)
    if matrix:
        out += ["### Head to head", "", *matrix, ""]
    faults = faults_table(found)
    if faults:
        out += ["### Faults and forfeits", "", *faults, ""]
    for note in tables.notes:
        out += [f"*note: {cell(note)}*", ""]
    return "\n".join(out)


def gate_section(info: Mapping[str, Any] | None, extra: Mapping[str, Any] | None = None) -> str | None:
    """A gate store's verdict section (the gate's own renderer), or None for a tournament's store."""
    if not info:
        return None
    from skyjo_ref.cli.gate_view import markdown as gate_markdown

    return gate_markdown(info, extra or {})


def faults_section(found: Mapping[str, BotIncidents], failed: str | None = None) -> str:
    """For a summary without a leaderboard (the gate's): the faults at a glance, then their table."""
    out: list[str] = []
    if failed:
        out += [f"> ❌ **{cell(failed)}**", ""]
    out += [incidents_line(found) or "✅ No bot forfeited, was struck or crashed.", ""]
    faults = faults_table(found)
    if faults:
        out += ["### Faults and forfeits", "", *faults, ""]
    return "\n".join(out)
