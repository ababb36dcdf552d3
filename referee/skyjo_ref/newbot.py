"""``skyjo-ref new-bot DIR --lang L``: a ready bot project, from the language's SDK template.

The language registry is the ``sdk/`` folder itself: a language is ``sdk/<lang>/`` with a ``template.json``::

    sdk/<lang>/                the SDK library (copied into the project as skyjo-sdk/, so it is self-contained)
    sdk/<lang>/template/       the project template; ``__BOT_NAME__`` (and ``__BOT_CLASS__``, an identifier
                               form of it, and ``__SKYJO_REF_VERSION__``) are replaced in file contents and names
    sdk/<lang>/template.json   {"command": "the bot's command, relative to DIR",
                                "exclude": ["globs not to copy from sdk/<lang> into the project"]}

An SDK helper plugs a language in by adding these files; nothing here changes. Optional keys: ``"python":
"bot.py"`` instead of ``command`` (an SDK bot file the league runs with its own interpreter), ``"copy_sdk":
false`` (the SDK is installed, not copied: Python's ``skyjo_bot`` comes with skyjo-ref and is mounted for
every isolated bot). Never copied: ``template/``, ``template.json``, build outputs (``node_modules``,
``target``, ``build``, ``dist``, caches).

``DIR/league.yaml`` is the same for every language but for the bot's entry: the bot (named after DIR's last
part) against ``greedy`` and ``random`` on the same seed and deals, under the default isolation, with
check-bot's quick cases run before the bot's first game.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import skyjo_bot

from skyjo_ref.errors import UsageError

#: Where the SDKs live: the repository's sdk/ folder (the one skyjo_bot is in).
SDK_ROOT: Final = Path(skyjo_bot.__file__).resolve().parent.parent
#: A bot's name, as a league config takes it.
NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
#: Never copied from an SDK folder: build outputs and caches.
BUILD_OUTPUTS: Final = ("node_modules", "target", "build", "dist", "__pycache__", "*.pyc", ".gradle", "bin", "obj")
#: The league every template gets: one seed, one number of deals, for every language.
LEAGUE_SEED: Final = "new-bot-1"
LEAGUE_DEALS: Final = 10


class NewBotError(UsageError):
    """A project that cannot be made; the message says what is wrong and what is expected."""


@dataclass(frozen=True, slots=True)
class Language:
    """One language's SDK folder and how its template is made into a project."""

    name: str
    folder: Path
    command: str | None
    python: str | None
    exclude: tuple[str, ...]
    copy_sdk: bool

    @property
    def template(self) -> Path:
        return self.folder / "template"


def languages(root: Path = SDK_ROOT) -> dict[str, Language]:
    """Every ``sdk/<lang>/`` with a ``template.json`` and a ``template/`` folder, by name."""
    found: dict[str, Language] = {}
    for spec in sorted(root.glob("*/template.json")):
        folder = spec.parent
        if not (folder / "template").is_dir():
            continue
        data: Any = json.loads(spec.read_text(encoding="utf-8"))
        command, python = data.get("command"), data.get("python")
        if not isinstance(data, dict) or (command is None) == (python is None):
            raise NewBotError(f"{spec}: expected a mapping with one of 'command' or 'python'")
        found[folder.name] = Language(
            folder.name,
            folder,
            command,
            python,
            tuple(data.get("exclude", ())),
            bool(data.get("copy_sdk", True)),
        )
    return found


def class_name(name: str) -> str:
    """An identifier form of a bot name: ``my-bot.v2`` -> ``MyBotV2`` (a letter first)."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    out = "".join(w[:1].upper() + w[1:] for w in words) or "Bot"
    return out if out[0].isalpha() else "Bot" + out


def new_bot(folder: Path, lang: str, root: Path = SDK_ROOT) -> tuple[str, Language]:
    """Write the project into ``folder``; its bot's name and language (NewBotError: nothing was written)."""
    known = languages(root)
    if lang not in known:
        raise NewBotError(f"--lang {lang!r}: unknown language: expected one of {', '.join(known) or 'none'}")
    name = folder.resolve().name
    if not NAME_PATTERN.match(name):
        raise NewBotError(
            f"{folder}: {name!r} is not a valid bot name (the bot is named after the folder): expected 1-40 "
            "letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise NewBotError(f"{folder}: exists and is not empty: expected a new or empty folder for the project")
    language = known[lang]
    words = {"__BOT_NAME__": name, "__BOT_CLASS__": class_name(name), "__SKYJO_REF_VERSION__": version("skyjo-ref")}
    folder.mkdir(parents=True, exist_ok=True)
    _copy(language.template, folder, words, ())
    if language.copy_sdk:
        skipped = ("template", "template.json", *BUILD_OUTPUTS, *language.exclude)
        _copy(language.folder, folder / "skyjo-sdk", {}, skipped)
    (folder / "league.yaml").write_text(league_yaml(name, language), encoding="utf-8")
    return name, language


def _copy(source: Path, target: Path, words: dict[str, str], skipped: tuple[str, ...]) -> None:
    """``source``'s tree into ``target``, placeholders replaced in names and text; modes kept (``build``)."""
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(fnmatch.fnmatch(part, glob) for part in relative.parts for glob in skipped):
            continue
        if any(fnmatch.fnmatch(str(relative), glob) for glob in skipped):
            continue
        out = target / _replace(str(relative), words)
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes()
        try:
            out.write_text(_replace(data.decode("utf-8"), words), encoding="utf-8")
        except UnicodeDecodeError:
            out.write_bytes(data)
        shutil.copymode(path, out)


def _replace(text: str, words: dict[str, str]) -> str:
    for key, value in words.items():
        text = text.replace(key, value)
    return text


def league_yaml(name: str, language: Language) -> str:
    """The project's league: the same for every language but for the bot's entry."""
    if language.python is not None:
        entry = f"python: {language.python}"
    else:
        assert language.command is not None
        entry = f"command: {json.dumps(language.command)}\n    cwd: ."
    return f"""\
# {name} against the built-in bots, on the same seeded deals as every language's template.
#   skyjo-ref check-bot league.yaml --bot {name}     walk it through the protocol's rules first
#   skyjo-ref tournament league.yaml                 play it (results in runs/)
name: {name}-league
rules: official
players_per_game: 2
deals: {LEAGUE_DEALS}                 # per pair of bots, each in both seatings
seed: {LEAGUE_SEED}          # the deals follow from it: the same for every language
time_control: {{decision_ms: 2000, max_strikes: 3}}
check: quick              # check-bot's quick cases on each version of a bot before its first game
output: runs/{name}-league
bots:
  - name: {name}
    {entry}
  - {{name: greedy, builtin: greedy}}
  - {{name: random, builtin: random}}
"""
