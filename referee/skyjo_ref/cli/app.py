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
from importlib.metadata import version
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


def _register_commands() -> None:
    # Each command module adds its commands to ``app``; add a module's name here.
    import importlib

    for name in (
        "tournament_cmd",
        "match_cmd",
        "play_cmd",
        "replay_cmd",
        "serve_cmd",
        "gate_cmd",
        "merge_cmd",
        "report_cmd",
    ):
        importlib.import_module(f"skyjo_ref.cli.{name}").register(app)


_register_commands()


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
