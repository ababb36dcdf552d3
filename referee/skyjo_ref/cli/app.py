"""The ``skyjo-ref`` command: the root Typer app and one place for errors.

Each command group lives in its own module with a ``register(app)`` function;
commands parse, call the library and render. Errors a user can cause become
one-line messages with documented exit codes (see docs/cli.md); the full
traceback only with ``--debug`` (or SKYJO_DEBUG=1).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
import typer.core
from typer._click import exceptions as click_errors

from skyjo_ref.cli import errors

# gRPC's C core writes its own log lines to stderr (a failed bind, a bad header); the commands
# say what went wrong in a sentence, so the core stays quiet unless --debug / SKYJO_DEBUG asks.
if os.environ.get("SKYJO_DEBUG", "") in ("", "0") and "--debug" not in sys.argv:
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")


def _flag_type_rich(self: typer.core.TyperOption, ctx: Any) -> str | None:
    """No ``<bool>`` beside an on/off flag in help: it takes no value (``--new``, not ``--new true``)."""
    if self.is_flag:
        return None
    return _option_type_rich(self, ctx)


# Typer 0.29 shows every flag's type as <bool>, inviting `--new true`, which click then refuses.
_option_type_rich = typer.core.TyperOption.display_type_rich
typer.core.TyperOption.display_type_rich = _flag_type_rich  # type: ignore[method-assign]


class _OneLineUsageErrors(typer.core.TyperGroup):
    """The root command, reporting usage errors (an unknown option, a value out of range, a missing argument) as
    one line through :mod:`errors` instead of Typer's boxes, wherever the command is run from (console script,
    ``python -m``, Typer's test runner)."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_errors.NoArgsIsHelpError:
            sys.exit(errors.EXIT_USAGE)  # the help was printed when the error was made
        except click_errors.ClickException as exc:
            errors.report(errors.UserError(errors.usage_message(exc)))
            sys.exit(exc.exit_code)
        except typer.Abort:
            errors.report(errors.UserError("aborted"))
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """A stand-in that loads the command when used (:class:`_LazyCommand`): the root's help imports nothing."""
        return _LazyCommand(cmd_name) if cmd_name in COMMANDS else None

    def invoke(self, ctx: Any) -> Any:
        """Run the command; Ctrl-C (or SIGTERM, cli/entry.py) that the command did not handle itself is one
        line and exit 130 (Typer would turn it into a silent exit 130)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise typer.Exit(errors.handle_unexpected(KeyboardInterrupt())) from None


app = typer.Typer(
    name="skyjo-ref",
    cls=_OneLineUsageErrors,
    help="Referee and tournaments for Skyjo bots.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version  # 30 ms of imports: only when asked

        typer.echo(f"skyjo-ref {version('skyjo-ref')}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[
        bool, typer.Option("--debug", envvar="SKYJO_DEBUG", help="Show full tracebacks on errors.")
    ] = False,
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Referee and tournaments for Skyjo bots."""
    errors.DEBUG = debug


#: Every command: the module that registers it (``register(app)``) and the line the root's --help shows for it.
#: The root loads a command's module only when that command runs (or prints its own help): ``skyjo-ref --help``
#: and ``--version`` import neither gRPC nor the referee. tests/test_cli_usage.py keeps each line equal to the
#: command's own help, and the table equal to what the modules register.
COMMANDS: dict[str, tuple[str, str]] = {
    "tournament": (
        "tournament_cmd",
        "Play a duplicate round-robin tournament and print its Elo table (resumes where it stopped).",
    ),
    "ratings": ("tournament_cmd", "Print a tournament's tables from its results store, without playing."),
    "match": ("match_cmd", "Play games between bots (seats rotate over duplicate deals) and summarise who is better."),
    "play": ("play_cmd", "Play against bots in the terminal: you take a seat on the referee like any bot."),
    "replay": (
        "replay_cmd",
        "Show a game record (skyjo-game/1), step through it, --check records, or write its --html viewer.",
    ),
    "serve": (
        "serve_cmd",
        "Run a referee: bots connect to it with tokens; `match --referee` and tournaments start games on it.",
    ),
    "gate": (
        "gate_cmd",
        "Is CANDIDATE better than (or as good as) BASELINE? A sequential test that stops when the evidence is enough.",
    ),
    "merge": (
        "merge_cmd",
        "Merge shard stores (and their game records) into OUT; a game stored in two shards is kept once.",
    ),
    "report": (
        "report_cmd",
        "Write one offline HTML page: leaderboard, head-to-head, rating history, per bot, gate, game viewer.",
    ),
    "check-bot": (
        "checkbot_cmd",
        "Check a bot against the protocol's rules before it plays: exit 0 when every case passes (or "
        "fails as listed in --expect-fail), 1 when one does not, 2 on bad usage.",
    ),
    "new-bot": (
        "newbot_cmd",
        "Write a ready bot project: the reference strategy, a build script, a README and a league to play it in.",
    ),
}


def load_command(name: str) -> Any:
    """The real (click) command ``name``, its module imported and registered on a Typer app of its own."""
    import importlib

    module, _ = COMMANDS[name]
    own = typer.Typer(add_completion=False)
    importlib.import_module(f"skyjo_ref.cli.{module}").register(own)
    return typer.main.get_group(own).commands[name]


class _LazyCommand(typer.core.TyperCommand):
    """A command the root lists by its name and help line, and loads (:func:`load_command`) when it is used."""

    def __init__(self, name: str) -> None:
        super().__init__(name, help=COMMANDS[name][1], short_help=COMMANDS[name][1])
        self.rich_help_panel = None

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        return load_command(self.name or "").make_context(info_name, args, parent=parent, **extra)


def main() -> None:
    """Console-script entry point: run the app, map known errors to messages and exit codes."""
    errors.DEBUG = os.environ.get("SKYJO_DEBUG", "") not in ("", "0")
    try:
        app(prog_name="skyjo-ref")  # usage errors: one line (_OneLineUsageErrors), exit 2
    except errors.UserError as exc:
        errors.report(exc)
        sys.exit(exc.exit_code)
    except (Exception, KeyboardInterrupt) as exc:
        sys.exit(errors.handle_unexpected(exc))
