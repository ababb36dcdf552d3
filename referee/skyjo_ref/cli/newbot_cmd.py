"""``skyjo-ref new-bot DIR --lang L``: write a ready bot project (see :mod:`skyjo_ref.newbot`)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from skyjo_ref.cli import errors
from skyjo_ref.newbot import new_bot


def register(app: typer.Typer) -> None:
    app.command("new-bot")(new_bot_cmd)


def new_bot_cmd(
    folder: Annotated[Path, typer.Argument(help="The project's folder (new or empty); its last part names the bot.")],
    lang: Annotated[str, typer.Option("--lang", help="The bot's language (python, or an SDK's under sdk/).")],
) -> None:
    """Write a ready bot project: the reference strategy, a build script, a README and a league to play it in."""
    try:
        name, language = new_bot(folder, lang)  # NewBotError: a usage error, printed as it is
    except OSError as exc:
        raise errors.UserError(f"{folder}: cannot write the project: {exc.strerror or exc}") from None
    where = shlex.quote(str(folder))
    typer.echo(f"wrote {folder}/: a {language.name} bot named {name!r} (the reference strategy; see its README.md)")
    typer.echo("next:")
    typer.echo(f"  {where}/build")
    typer.echo(f"  skyjo-ref check-bot {where}/league.yaml --bot {name}")
    typer.echo(f"  skyjo-ref tournament {where}/league.yaml")
