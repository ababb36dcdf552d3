"""What several commands share: their common options (defined, parsed and checked once, so ``gate``, ``match``,
``tournament`` and ``play`` say the same things the same way), ``--json`` output, the table console."""

from __future__ import annotations

import json
import shlex
import signal
import tempfile
from collections.abc import Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer
from rich.console import Console
from skyjo_bot import Rules, RulesError
from skyjo_bot.address import check_address
from skyjo_bot.types import TimeControl, TimeControlError

from skyjo_ref.cli import errors
from skyjo_ref.errors import BotSpecError

if TYPE_CHECKING:  # what the options turn into loads when a command parses them, not for its --help
    from skyjo_ref.execution.executor import Executor
    from skyjo_ref.players import BotSpec
    from skyjo_ref.sandbox import Isolation
    from skyjo_ref.tournament.shard import Shard

_T = TypeVar("_T")

#: ``--rules PRESET`` and ``-o/--option KEY=VALUE`` (read by :func:`rules_from_cli`).
DEFAULT_RULES: Final = "official"
RulesOption = Annotated[str, typer.Option("--rules", metavar="PRESET", help="Rules preset (official, french, ...).")]
RuleOptionsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--option", "-o", metavar="KEY=VALUE", help="Rules option over the preset, e.g. end_score=50 (repeatable)."
    ),
]

#: The time control's flags (read by :func:`clock_from_cli`); their defaults are :data:`DEFAULT_TIME_CONTROL`'s.
DEFAULT_TIME_CONTROL: Final = TimeControl()
DecisionMsOption = Annotated[int, typer.Option("--decision-ms", help="Time limit per decision, ms (0: no limit).")]
BankMsOption = Annotated[int, typer.Option("--bank-ms", help="Time bank per seat per game, ms (0: no bank).")]
MaxStrikesOption = Annotated[int, typer.Option("--max-strikes", help="Strikes before a seat forfeits (0: never).")]
GraceMsOption = Annotated[int, typer.Option("--grace-ms", help="How long a disconnected bot may stay away, ms.")]

#: Line-based progress off a terminal (``gate``, ``tournament``); each command keeps its own defaults.
ProgressEveryOption = Annotated[
    int,
    typer.Option(
        "--progress-every", min=1, metavar="GAMES", help="Off a terminal: a progress line every this many games..."
    ),
]
ProgressSecondsOption = Annotated[
    float,
    typer.Option(
        "--progress-seconds",
        min=0.1,
        metavar="SECONDS",
        help="...or once this many seconds passed, whichever comes first.",
    ),
]

#: ``--executor WHERE`` (read by :func:`parse_executor`).
ExecutorOption = Annotated[
    str | None,
    typer.Option(
        "--executor",
        metavar="WHERE",
        help="Where games run: local, processes[:N] (Dask workers on this machine) or tcp://HOST:PORT "
        "(a Dask scheduler); default local (tournament: the config's executor); see docs/scale-out.md.",
        show_default=False,
    ),
]

#: ``--in-process`` as the commands that may play on Dask workers take it.
IsolationOption = Annotated[
    str | None,
    typer.Option(
        "--isolation",
        help="strict: each bot process sees only its own files and the referee (docs/sandbox.md); none: it runs "
        "as you, with your environment (trusted code only). Default: strict where this machine can isolate bots.",
        metavar="strict|none",
    ),
]

InProcessOption = Annotated[
    bool,
    typer.Option(
        "--in-process",
        help="Play Python bot files inside this process, without gRPC: fast, for your own trusted bots only "
        "(no isolation: such a bot can read the referee's memory). The time control still holds. "
        "With a Dask --executor: inside each worker's process.",
    ),
]


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with true/false and integers read as such."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise errors.UserError(f"--option {text!r}: expected key=value, e.g. --option column_clear=false")
    value: Any = raw.strip()
    if value.lower() in ("true", "false"):
        value = value.lower() == "true"
    else:
        try:
            value = int(value)
        except ValueError:
            pass
    return key.strip(), value


def time_control_from_cli(flags: Mapping[str, int | None], base: TimeControl | None = None) -> TimeControl:
    """The time control ``--decision-ms`` etc. ask for, checked by :class:`TimeControl` (which owns the
    limits, as for config files); flags left at ``None`` keep ``base``'s values. UserError when wrong."""
    try:
        return TimeControl.from_mapping({key: value for key, value in flags.items() if value is not None}, base)
    except TimeControlError as exc:
        flag = "--" + (exc.key or "time-control").replace("_", "-")
        raise errors.UserError(f"{flag}: {exc.problem}") from None


def clock_from_cli(
    decision_ms: int | None,
    bank_ms: int | None,
    max_strikes: int | None,
    grace_ms: int | None,
    base: TimeControl | None = None,
) -> TimeControl:
    """The time control the four clock flags ask for (``None``: ``base``'s value). UserError when wrong."""
    flags = {"decision_ms": decision_ms, "bank_ms": bank_ms, "max_strikes": max_strikes, "grace_ms": grace_ms}
    return time_control_from_cli(flags, base)


def isolation_from_cli(text: str | None, stderr: Console) -> Isolation:
    """``--isolation``: as given, else strict where this machine can isolate bots (else none, said in one line)."""
    from skyjo_ref.sandbox import ISOLATIONS, default_isolation, isolation_problem

    if text is None:
        isolation, note = default_isolation()
        if note is not None:
            stderr.print(f"note: {note}", markup=False, highlight=False)
        return isolation
    if text not in ISOLATIONS:
        raise errors.UserError(f"--isolation {text!r}: expected strict or none")
    if text == "strict" and (problem := isolation_problem()) is not None:
        raise errors.UserError(f"--isolation strict: cannot isolate bots on this machine: {problem}")
    return text


def parse_executor(text: str | None) -> Executor | None:
    """``--executor WHERE`` (None when not given). UserError when wrong."""
    if text is None:
        return None
    from skyjo_ref.execution.executor import Executor, ExecutorError

    try:
        return Executor.parse(text)
    except ExecutorError as exc:
        raise errors.UserError(f"--executor: {exc}") from None


def parse_shard(text: str | None) -> Shard | None:
    """``--shard I/N`` (None when not given). UserError when wrong."""
    if text is None:
        return None
    from skyjo_ref.tournament.shard import Shard

    return Shard.parse(text)


def folder_from_cli(flag: str, path: Path | None, temp_prefix: str) -> Path:
    """The folder ``flag`` names (created), or a fresh one under the temp folder. UserError when it cannot be."""
    try:
        if path is None:
            return Path(tempfile.mkdtemp(prefix=temp_prefix))
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise errors.UserError(f"{flag} {path}: cannot create the folder: {exc.strerror or exc}") from None
    return path


def bots_from_cli(texts: Iterable[str]) -> list[BotSpec]:
    """The bots the command line names (BotSpecError naming the first wrong one). A wrong one right after a bare
    ``cmd:PROGRAM`` was most likely meant as its argument: the message says how to quote the command."""
    from skyjo_ref.players import parse_bot_spec

    specs: list[BotSpec] = []
    previous = ""
    for text in texts:
        try:
            specs.append(parse_bot_spec(text))
        except BotSpecError as exc:
            quoted = shlex.quote(f"{previous} {text}")
            if previous.startswith("cmd:") and " " not in previous.strip() and quoted not in str(exc):
                raise BotSpecError(f"{exc} (a cmd: with spaces is one argument, quoted: {quoted})") from None
            raise
        previous = text
    return specs


def in_process_notes(specs: Iterable[BotSpec], in_process: bool) -> list[str]:
    """What ``--in-process`` leaves as it was, said rather than silently ignored: only Python bot files move into
    the command's process (built-in bots always play there)."""
    if not in_process:
        return []
    return [
        f"note: --in-process plays only Python bot files in this process; {spec.text} "
        + ("connects by itself as before" if spec.kind == "remote" else "runs as its own process as before")
        for spec in specs
        if spec.kind in ("command", "remote")
    ]


def referee_from_cli(address: str | None) -> str | None:
    """``--referee ADDR``, checked before anything starts (UserError saying the forms expected)."""
    if address is None:
        return None
    try:
        return check_address(address, "--referee")
    except ValueError as exc:
        raise errors.UserError(str(exc)) from None


def run_stoppable(work: Coroutine[Any, Any, _T]) -> _T:
    """Run a long command's event loop; SIGTERM stops it like Ctrl-C (KeyboardInterrupt: finished games are
    kept)."""
    import asyncio

    async def main() -> _T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if task is not None:
            try:
                loop.add_signal_handler(signal.SIGTERM, task.cancel)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            return await work
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    return asyncio.run(main())


def rules_from_cli(preset: str, options: Iterable[str] = ()) -> Rules:
    """The rules a ``--rules PRESET --option k=v ...`` command line asks for (UserError when wrong)."""
    data: dict[str, Any] = {"preset": preset}
    data.update(parse_option(o) for o in options)
    try:
        return Rules.from_dict(data)
    except RulesError as exc:
        raise errors.UserError(str(exc)) from None


def stdout_taken(*paths: Path | None) -> bool:
    """Whether a ``--json -`` or ``--markdown -`` has stdout: then it is theirs alone (tables, lines to stderr)."""
    return any(path is not None and str(path) == "-" for path in paths)


def check_json_target(path: Path | None) -> None:
    """Refuse a ``--json`` file that cannot be written, before any game is played."""
    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise errors.UserError(f"--json {path}: is a folder; expected a file name (or - for stdout)")
    if not path.parent.is_dir():
        raise errors.UserError(f"--json {path}: folder {path.parent} does not exist")


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as indented JSON to ``path`` (``-``: stdout).

    Strict JSON: a NaN or an infinity (which ``json`` would write as the invalid
    ``NaN``/``Infinity``) is written null.
    """
    from skyjo_ref.tournament.tables import json_safe

    text = json.dumps(json_safe(data), indent=2, allow_nan=False) + "\n"
    if str(path) == "-":
        typer.echo(text, nl=False)
        return
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise errors.UserError(f"--json {path}: cannot write: {exc.strerror or exc}") from None


def table_console(stderr: bool = False) -> Console:
    """Where tables go; in a pipe or a CI log, wide enough that no column is cut."""
    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=200, soft_wrap=True)


def old_spelling(value: _T | None, old: _T | None, flag: str, old_flag: str) -> _T | None:
    """An option given by its name or by its old spelling (a hidden alias; docs/cli.md lists them); both: refused."""
    if old is None:
        return value
    if value is not None and value != old:
        raise errors.UserError(f"{old_flag} is the old spelling of {flag}: give one of them")
    return old
