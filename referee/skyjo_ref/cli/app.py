"""The ``skyjo-ref`` command: the root Typer app and one place for errors.

Each command group lives in its own module with a ``register(app)`` function;
commands parse, call the library and render. Errors a user can cause become
one-line messages with documented exit codes (see docs/cli.md); the full
traceback only with ``--debug`` (or SKYJO_DEBUG=1).
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from typing import Annotated, Any

import typer
import typer.core

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

app = typer.Typer(
    name="skyjo-ref",
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

    for name in ("tournament_cmd", "match_cmd", "play_cmd", "replay_cmd", "serve_cmd", "report_cmd"):
        importlib.import_module(f"skyjo_ref.cli.{name}").register(app)


_register_commands()


def main() -> None:
    """Console-script entry point: run the app, map known errors to messages and exit codes."""
    errors.DEBUG = os.environ.get("SKYJO_DEBUG", "") not in ("", "0")
    try:
        app()  # Typer reports its own usage errors (exit 2) and exits
    except errors.UserError as exc:
        errors.report(exc)
        sys.exit(exc.exit_code)
    except (Exception, KeyboardInterrupt) as exc:
        sys.exit(errors.handle_unexpected(exc))
