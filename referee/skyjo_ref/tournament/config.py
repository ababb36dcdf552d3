"""The tournament config file (YAML): read it and check everything before a game is played.

Every mistake a user can make in the file is found here, before any bot is
started or any game is played, and reported as one :class:`ConfigError` whose
message names the file, the line, the key path and what is expected
(``league.yaml:12: bots[2].command: 'pyhton' is not a command found on PATH``).
Relative paths are read from the config file's folder, so a config works from
any working directory.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.util
import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import yaml
from skyjo_bot.address import check_address
from skyjo_bot.loader import split_spec
from skyjo_bot.types import MAX_PLAYERS, MIN_PLAYERS, Rules, RulesError, TimeControl, TimeControlError

from skyjo_ref.botcheck import BotFileError, check_bot_file, check_bot_place
from skyjo_ref.botfiles import BotLinkError, check_links
from skyjo_ref.bots import BUILTIN_BOTS
from skyjo_ref.checkbot.before import CHECK_LEVELS
from skyjo_ref.errors import ConfigError
from skyjo_ref.execution.executor import Executor, ExecutorError
from skyjo_ref.execution.types import RefereeConfig as RefereeConfig  # re-exported: the config's referee part
from skyjo_ref.execution.types import RoomConfig
from skyjo_ref.players import BOT_KINDS, BotSpec
from skyjo_ref.sandbox import (
    ISOLATIONS,
    Isolation,
    Limits,
    Sandbox,
    SandboxUnavailable,
    check_sandbox,
    default_isolation,
    merge,
)
from skyjo_ref.seating import SEATINGS, block_size
from skyjo_ref.server.guard import token_problem
from skyjo_ref.stats.bootstrap import INTERVAL_METHODS
from skyjo_ref.tournament.adaptive import DEFAULT_MAX_GAMES, AdaptiveSettings
from skyjo_ref.tournament.league import SCHEDULE_KINDS, full_meetings, league_tables
from skyjo_ref.tournament.secret import SecretError, read_secret
from skyjo_ref.tournament.tables import DEFAULT_INTERVAL, DEFAULT_MODEL, RATING_MODELS, RESAMPLE_UNITS
from skyjo_ref.tournament.tables import RatingConfig as RatingConfig  # re-exported: the config's rating part
from skyjo_ref.yamlfile import KeyPath, YamlFileError, dotted, line_of, load_yaml

#: The seat design when a config names none (docs/tournaments.md, "Seatings": why balanced).
DEFAULT_SEATING: Final = "balanced"
#: Bot names become parts of game keys and file names: keep them plain.
NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")

TOP_KEYS: Final = (
    "name",
    "rules",
    "players_per_game",
    "deals",
    "schedule",
    "seating",
    "challengers",
    "meetings",
    "adaptive",
    "seed",
    "seed_secret_env",
    "seed_secret_file",
    "concurrency",
    "executor",
    "connect_timeout_s",
    "time_control",
    "output",
    "referee",
    "rating",
    "limits",
    "network",
    "isolation",
    "check",
    "bots",
)
RATING_KEYS: Final = ("anchor", "elo", "bootstrap", "interval_seed", "model", "interval", "resample")
REFEREE_KEYS: Final = ("address", "control_token", "listen")
BOT_KEYS: Final = ("name", *BOT_KINDS, "version", "cwd", "root", "env", "limits", "network", "isolation", "in_process")
#: The largest value of each limit (a typo guard: 10x any sane league setting).
LIMIT_MAXIMUM: Final = {
    "memory_mb": 1_048_576,
    "cpu_seconds": 10_000_000,
    "open_files": 1_048_576,
    "file_size_mb": 10_000_000,
    "processes": 100_000,
}
REMOTE_KEYS: Final = ("token",)


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A checked tournament config."""

    path: Path
    name: str
    rules: Rules
    players_per_game: int  # the largest table size (what a referee room must seat)
    deals: int
    seed: int | str
    concurrency: int
    time_control: TimeControl
    connect_timeout_s: float
    output: Path
    referee: RefereeConfig
    rating: RatingConfig
    bots: tuple[BotSpec, ...]
    schedule: str = "round_robin"  # one of league.SCHEDULE_KINDS
    seating: str = DEFAULT_SEATING  # one of seating.SEATINGS: the seat design of a duplicate block
    challengers: tuple[str, ...] = ()  # a gauntlet's challengers
    meetings: int = 1  # a sample's tables per pair of bots (at least; at most one more)
    sandbox: Sandbox = field(default_factory=Sandbox)  # the default of managed bots (each has its own in BotSpec)
    adaptive: AdaptiveSettings = field(default_factory=AdaptiveSettings)  # schedule: adaptive's settings
    seed_secret: str | None = field(default=None, repr=False)  # mixed into every deal's seed (tournament.secret)
    seed_secret_source: str | None = None  # where it came from: env:NAME or file:PATH (never the secret)
    seed_secret_file: Path | None = None  # the file it was read from: kept out of every bot's view
    executor: Executor = field(default_factory=Executor)  # where games run (execution/); --executor overrides it
    isolation_note: str | None = None  # why bots are not isolated, when the config did not say and cannot have it
    check: str = "none"  # "quick": check-bot's quick cases on each bot with games to play, before they start
    sizes: tuple[int, ...] = ()  # several table sizes (players_per_game: [2, 3, 4]); () is players_per_game alone

    @property
    def table_sizes(self) -> tuple[int, ...]:
        """Every table size the league plays, smallest first."""
        return self.sizes or (self.players_per_game,)

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    def tables(self) -> list[tuple[str, ...]]:
        """The tables this config's schedule plays (names sorted in each, tables sorted; every size)."""
        return sorted(
            table
            for k in self.table_sizes
            for table in league_tables(
                self.schedule,
                self.bot_names,
                k,
                challengers=self.challengers,
                meetings=self.meetings,
                seed=self.seed,
            )
        )

    def bot(self, name: str) -> BotSpec:
        for entry in self.bots:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def room(self) -> RoomConfig:
        """The part of the config the execution layer needs to play its games (no ratings, no schedule)."""
        return RoomConfig(
            bots=self.bots,
            rules=self.rules,
            time_control=self.time_control,
            players_per_game=self.players_per_game,
            connect_timeout_s=self.connect_timeout_s,
            output=self.output,
            referee=self.referee,
            hidden=(self.path, *((self.seed_secret_file,) if self.seed_secret_file is not None else ())),
        )


# ------------------------------------------------------------------ YAML with lines

Path_ = KeyPath


class _Checker:
    """Knows the line of every key path, and raises errors that cite them."""

    def __init__(self, source: str, lines: dict[Path_, int]) -> None:
        self.source = source
        self.lines = lines

    def fail(self, path: Path_, message: str) -> ConfigError:
        line = line_of(self.lines, path)
        where = f"{self.source}:{line}" if line is not None else self.source
        return ConfigError(f"{where}: {dotted(path)}: {message}")

    def mapping(self, value: Any, path: Path_, allowed: Sequence[str], what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a mapping ({what}), got {_kind(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(path, f"key {key!r} is not a name: expected one of {', '.join(allowed)}")
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise self.fail((*path, key), f"unknown key {key!r}{hint}: expected one of {', '.join(allowed)}")
        return value

    def integer(self, value: Any, path: Path_, low: int, high: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f">= {low}"
            raise self.fail(path, f"expected an integer {bound}, got {value!r}")
        return value

    def string(self, value: Any, path: Path_, what: str = "a non-empty string") -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"expected {what}, got {value!r}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _load_yaml(text: str, source: str) -> tuple[Any, dict[Path_, int]]:
    try:
        return load_yaml(text, source)
    except YamlFileError as exc:
        raise ConfigError(str(exc)) from None


# ------------------------------------------------------------------------- loading


def load_config(path: str | Path, output: str | Path | None = None) -> TournamentConfig:
    """Read and check a config file; ``output`` (from the command line) overrides its ``output``."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: no such file: expected a tournament config (YAML)") from None
    except IsADirectoryError:
        raise ConfigError(f"{source}: is a folder: expected a tournament config file (YAML)") from None
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text: expected a tournament config (YAML)") from None
    return parse_config(text, path, output=output)


def parse_config(text: str, path: Path, output: str | Path | None = None) -> TournamentConfig:
    """Check the text of a config file that lives at ``path``."""
    source = str(path)
    data, lines = _load_yaml(text, source)
    check = _Checker(source, lines)
    base = path.resolve().parent
    if data is None:
        raise check.fail((), "the file is empty: expected a mapping with at least 'bots'")
    top = check.mapping(data, (), TOP_KEYS, "the tournament's settings")

    name = _name(check, top.get("name", path.stem))

    rules = _rules(check, top.get("rules"))
    sizes = _sizes(check, top.get("players_per_game", 2))
    k = sizes[-1]
    deals = check.integer(top.get("deals", 10), ("deals",), 1, 1_000_000)
    seed = top.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int | str) or (isinstance(seed, str) and not seed.strip()):
        raise check.fail(("seed",), f"expected an integer or a non-empty string, got {seed!r}")
    seed_secret, seed_secret_source = _seed_secret(check, top, base)
    concurrency = check.integer(top.get("concurrency", 2), ("concurrency",), 1, 256)
    time_control = _time_control(check, top.get("time_control", {}))
    connect = top.get("connect_timeout_s", 30)
    if isinstance(connect, bool) or not isinstance(connect, int | float) or not 0 < connect <= 3600:
        raise check.fail(("connect_timeout_s",), f"expected seconds, a number from 0 to 3600 (not 0), got {connect!r}")
    referee = _referee(check, top.get("referee", {}))
    isolation, isolation_note = _default_isolation(check, top, referee)
    default_sandbox = Sandbox(
        _limits(check, top["limits"], ("limits",)) if "limits" in top else Limits(),
        _network(check, top["network"], ("network",)) if "network" in top else None,
        isolation,
    )
    try:
        executor = Executor.parse(top.get("executor", "local"))
    except ExecutorError as exc:
        raise check.fail(("executor",), str(exc)) from None

    bots_raw, bots, seen = _bots(check, top, base, default_sandbox, k, referee)

    rating = _rating(check, top.get("rating", {}), seen, seed, secret=seed_secret is not None)
    for size in sizes:  # every size must have its schedule (a sample's meetings fit the smallest table)
        schedule_kind, challengers, meetings = _schedule(check, top, seen, size)
    adaptive = _adaptive(check, top, schedule_kind, len(bots))
    seating = _seating(check, top, k)
    _check_sandboxes(check, bots_raw, bots, referee)

    out = _output_folder(check, top, output, base, name)
    secret_file = _secret_file(top, base)
    _check_bot_links(check, bots, hidden=(path, out, *secret_file))

    return TournamentConfig(
        path=path,
        name=name,
        rules=rules,
        players_per_game=k,
        sizes=sizes if len(sizes) > 1 else (),
        deals=deals,
        seed=seed,
        concurrency=concurrency,
        time_control=time_control,
        connect_timeout_s=float(connect),
        output=out,
        referee=referee,
        rating=rating,
        bots=tuple(bots),
        schedule=schedule_kind,
        seating=seating,
        challengers=challengers,
        meetings=meetings,
        sandbox=default_sandbox,
        executor=executor,
        seed_secret=seed_secret,
        seed_secret_source=seed_secret_source,
        seed_secret_file=secret_file[0] if secret_file else None,
        adaptive=adaptive,
        isolation_note=isolation_note if any(b.managed and b.sandbox.isolation == "none" for b in bots) else None,
        check=_check_level(check, top.get("check", "none")),
    )


def _name(check: _Checker, name: Any) -> str:
    """The tournament's ``name`` (the file's stem by default): what its output folder is called."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,79}", name):
        raise check.fail(("name",), f"expected a name of letters, digits, spaces, '_', '.', '-', got {name!r}")
    return name


def _seating(check: _Checker, top: Mapping[str, Any], k: int) -> str:
    """``seating``: one of SEATINGS (the error says what each costs in games a deal at ``k`` players)."""
    seating = top.get("seating", DEFAULT_SEATING)
    if seating not in SEATINGS:
        cost = ", ".join(f"{block_size(k, kind)} at {k} players for {kind}" for kind in SEATINGS)
        raise check.fail(
            ("seating",), f"unknown seating {seating!r}: expected one of {', '.join(SEATINGS)} (games a deal: {cost})"
        )
    return str(seating)


def _bots(
    check: _Checker, top: Mapping[str, Any], base: Path, default_sandbox: Sandbox, k: int, referee: RefereeConfig
) -> tuple[list[Any], list[BotSpec], dict[str, int]]:
    """``bots``: the raw entries, the checked bots, and each name's index (enough of them for ``k`` seats, and
    each able to reach ``referee``)."""
    bots_raw = top.get("bots")
    if "bots" not in top:
        raise check.fail(
            (), "missing key 'bots': expected a list of bots, each with a name and one of " + ", ".join(BOT_KINDS)
        )
    if not isinstance(bots_raw, list) or not bots_raw:
        raise check.fail(("bots",), f"expected a non-empty list of bots, got {_kind(bots_raw)}")
    bots: list[BotSpec] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(bots_raw):
        entry = _bot(check, raw, ("bots", index), base, default_sandbox)
        if isinstance(raw, dict) and "version" in raw:
            entry = dataclasses.replace(entry, version=_version(check, raw["version"], ("bots", index, "version")))
        if entry.name in seen:
            raise check.fail(
                ("bots", index, "name"),
                f"duplicate bot name {entry.name!r} (also bots[{seen[entry.name]}]): give each bot a unique name",
            )
        seen[entry.name] = index
        bots.append(entry)
    if len(bots) < 2:  # no table at all: suggesting players_per_game 1 would suggest another invalid config
        raise check.fail(("bots",), f"only {len(bots)} bot: expected at least 2 bots (a game has 2 to 8 players)")
    if len(bots) < k:
        raise check.fail(
            ("players_per_game",),
            f"{k} players per game but only {len(bots)} bots: expected at least {k} bots, "
            f"or players_per_game at most {len(bots)}",
        )
    if any(b.kind == "remote" for b in bots) and referee.address is None and referee.listen.endswith(":0"):
        index = next(i for i, b in enumerate(bots) if b.kind == "remote")
        raise check.fail(
            ("bots", index, "remote"),
            "a remote bot must know where to connect: set referee.listen to a fixed address "
            "(e.g. 0.0.0.0:50051) or referee.address to a running referee",
        )

    if referee.address is not None and any(b.in_process for b in bots):
        index = next(i for i, b in enumerate(bots) if b.in_process)
        raise check.fail(
            ("bots", index, "in_process"),
            "an in_process bot plays inside this process's own referee: drop referee.address or in_process",
        )
    return bots_raw, bots, seen


def _output_folder(check: _Checker, top: Mapping[str, Any], output: str | Path | None, base: Path, name: str) -> Path:
    """Where results go: ``output`` (the command line's), the file's ``output`` (relative to it), or runs/NAME."""
    if output is not None:
        out = Path(output)
    elif "output" in top:
        out_raw = check.string(top["output"], ("output",), "a folder path")
        out = Path(out_raw).expanduser()
        if not out.is_absolute():
            out = base / out
    else:
        out = base / "runs" / name.replace(" ", "_")
    if out.exists() and not out.is_dir():
        raise check.fail(("output",), f"{out} exists and is not a folder: expected a folder for the results")
    return out


def _check_bot_links(check: _Checker, bots: Sequence[BotSpec], hidden: tuple[Path, ...]) -> None:
    """Before any game: an isolated bot's links stay in its folder (none points at what it must not see)."""
    for index, entry in enumerate(bots):
        try:
            check_links(entry, hidden=hidden)
        except BotLinkError as exc:
            raise check.fail(("bots", index), str(exc)) from None


def _sizes(check: _Checker, raw: Any) -> tuple[int, ...]:
    """``players_per_game``: one size (``4``) or several (``[2, 3, 4]``), each from 2 to 8, sorted."""
    path: Path_ = ("players_per_game",)
    if not isinstance(raw, list):
        return (check.integer(raw, path, MIN_PLAYERS, MAX_PLAYERS),)
    if not raw:
        raise check.fail(path, f"expected a size from {MIN_PLAYERS} to {MAX_PLAYERS} or a list of sizes, got []")
    sizes = [check.integer(value, (*path, i), MIN_PLAYERS, MAX_PLAYERS) for i, value in enumerate(raw)]
    if len(set(sizes)) != len(sizes):
        raise check.fail(path, f"a size is listed twice in {raw!r}: expected each table size once")
    return tuple(sorted(sizes))


ADAPTIVE_KEYS: Final = ("confidence", "top", "max_games", "ring", "max_blocks_per_pair")


def _adaptive(check: _Checker, top: Mapping[str, Any], kind: str, bots: int) -> AdaptiveSettings:
    """``adaptive: {confidence, top, max_games, ring, max_blocks_per_pair}`` (only with ``schedule: adaptive``)."""
    if "adaptive" in top and kind != "adaptive":
        raise check.fail(
            ("adaptive",), f"adaptive sets an adaptive schedule, not a {kind} one: expected schedule: adaptive"
        )
    if kind != "adaptive":
        return AdaptiveSettings()
    raw = top.get("adaptive") or {}
    given = check.mapping(raw, ("adaptive",), ADAPTIVE_KEYS, ", ".join(ADAPTIVE_KEYS))
    confidence = given.get("confidence", 0.95)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.5 <= confidence < 1:
        raise check.fail(("adaptive", "confidence"), f"expected a probability from 0.5 to below 1, got {confidence!r}")
    best = given.get("top")
    if best is not None:
        best = check.integer(best, ("adaptive", "top"), 1, bots)
    return AdaptiveSettings(
        confidence=float(confidence),
        top=best,
        max_games=check.integer(given.get("max_games", DEFAULT_MAX_GAMES), ("adaptive", "max_games"), 1, 100_000_000),
        ring=check.integer(given.get("ring", 3), ("adaptive", "ring"), 1, 1000),
        max_blocks_per_pair=check.integer(
            given.get("max_blocks_per_pair", 8), ("adaptive", "max_blocks_per_pair"), 1, 10_000
        ),
    )


def _seed_secret(check: _Checker, top: Mapping[str, Any], base: Path) -> tuple[str | None, str | None]:
    """``seed_secret_env: NAME`` or ``seed_secret_file: PATH``: the secret, read now, and where it came from."""
    if "seed_secret_env" in top and "seed_secret_file" in top:
        raise check.fail(("seed_secret_file",), "expected one of seed_secret_env and seed_secret_file, not both")
    try:
        if "seed_secret_env" in top:
            name = top["seed_secret_env"]
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise check.fail(("seed_secret_env",), f"expected an environment variable's name, got {name!r}")
            return read_secret(env=name), f"env:{name}"
        if "seed_secret_file" in top:
            raw = check.string(top["seed_secret_file"], ("seed_secret_file",), "a file path")
            file = Path(raw).expanduser()
            if not file.is_absolute():
                file = base / file
            return read_secret(file=file), f"file:{raw}"
    except SecretError as exc:
        key = "seed_secret_env" if "seed_secret_env" in top else "seed_secret_file"
        raise check.fail((key,), str(exc)) from None
    return None, None


def _secret_file(top: Mapping[str, Any], base: Path) -> tuple[Path, ...]:
    """The seed secret's file (checked by _seed_secret), as a path to keep out of view; () when there is none."""
    raw = top.get("seed_secret_file")
    if not isinstance(raw, str):
        return ()
    file = Path(raw).expanduser()
    return (file if file.is_absolute() else base / file,)


def _version(check: _Checker, raw: Any, path: Path_) -> str:
    """A bot's ``version:`` (a commit id, a tag): what its games are stored under instead of its files' digest."""
    if isinstance(raw, bool) or not isinstance(raw, str | int) or not re.fullmatch(r"[!-~]{1,100}", str(raw)):
        raise check.fail(
            path, f"expected a version: 1-100 printable characters without spaces (e.g. a commit id), got {raw!r}"
        )
    return str(raw)


def _rules(check: _Checker, raw: Any) -> Rules:
    if raw is None:
        return Rules()
    if isinstance(raw, str):
        raw = {"preset": raw}
    if not isinstance(raw, dict):
        raise check.fail(("rules",), f"expected a preset name or a mapping of options, got {_kind(raw)}")
    allowed = ("preset", *Rules.OPTIONS)
    check.mapping(raw, ("rules",), allowed, "a preset and rules options")
    try:
        return Rules.from_dict(raw)
    except RulesError as exc:
        message = str(exc)
        key = next((k for k in raw if re.search(rf"\b{re.escape(str(k))}\b", message)), None)
        path: Path_ = ("rules", key) if key is not None else ("rules",)
        raise check.fail(path, message) from None
    except TypeError as exc:
        raise check.fail(("rules",), f"bad rules: {exc}") from None


def _time_control(check: _Checker, raw: Any) -> TimeControl:
    """The referee's time control, checked by :meth:`TimeControl.from_mapping` (which owns the limits)."""
    if raw is None:
        raw = {}
    check.mapping(raw, ("time_control",), TimeControl.KEYS, ", ".join(TimeControl.KEYS))
    try:
        return TimeControl.from_mapping(raw)
    except TimeControlError as exc:
        raise check.fail(("time_control", exc.key) if exc.key else ("time_control",), exc.problem) from None


def _is_address(value: Any) -> bool:
    try:
        return isinstance(value, str) and bool(check_address(value))
    except ValueError:
        return False


def _referee(check: _Checker, raw: Any) -> RefereeConfig:
    if raw is None:
        raw = {}
    ref = check.mapping(raw, ("referee",), REFEREE_KEYS, "address and control_token, or listen")
    address = ref.get("address")
    if address is not None and not _is_address(address):
        raise check.fail(("referee", "address"), f"expected host:port of a running referee, got {address!r}")
    token = ref.get("control_token")
    if token is not None:
        token = check.string(token, ("referee", "control_token"), "the referee's control token")
    if address is not None and token is None:
        token = os.environ.get("SKYJO_CONTROL_TOKEN")
        if not token:
            raise check.fail(
                ("referee", "control_token"),
                "a running referee needs its control token: set referee.control_token or SKYJO_CONTROL_TOKEN",
            )
    listen = ref.get("listen", "127.0.0.1:0")
    if not _is_address(listen):
        raise check.fail(("referee", "listen"), f"expected host:port to listen on (port 0: any), got {listen!r}")
    if address is not None and "listen" in ref:
        raise check.fail(("referee", "listen"), "give either address (a running referee) or listen, not both")
    return RefereeConfig(address=address, control_token=token, listen=listen)


def _schedule(
    check: _Checker, top: Mapping[str, Any], names: Mapping[str, int], k: int
) -> tuple[str, tuple[str, ...], int]:
    """The schedule kind and its settings: challengers for a gauntlet, meetings for a sample."""
    kind = top.get("schedule", "round_robin")
    if not isinstance(kind, str) or kind not in SCHEDULE_KINDS:
        close = difflib.get_close_matches(str(kind), SCHEDULE_KINDS, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise check.fail(("schedule",), f"unknown schedule {kind!r}{hint}: expected one of {', '.join(SCHEDULE_KINDS)}")
    if "challengers" in top and kind != "gauntlet":
        raise check.fail(
            ("challengers",),
            f"challengers belong to a gauntlet, not a {kind} schedule: expected schedule: gauntlet, or no challengers",
        )
    if "meetings" in top and kind != "sampled":
        raise check.fail(
            ("meetings",),
            f"meetings size a sampled schedule, not a {kind} one: expected schedule: sampled, or no meetings",
        )
    if kind == "gauntlet":
        return kind, _challengers(check, top, names, k), 1
    if kind == "sampled":
        if "meetings" not in top:
            raise check.fail(
                ("schedule",),
                "missing key 'meetings': a sampled schedule needs how many tables "
                "every pair of bots shares (meetings: 1 or more)",
            )
        most = full_meetings(len(names), k)
        meetings = top["meetings"]
        if isinstance(meetings, bool) or not isinstance(meetings, int) or not 1 <= meetings <= most:
            raise check.fail(
                ("meetings",),
                f"expected an integer from 1 to {most} (at {most} every pair shares "
                f"every table it can: {len(names)} bots at {k} players), got {meetings!r}",
            )
        return kind, (), meetings
    return kind, (), 1


def _challengers(check: _Checker, top: Mapping[str, Any], names: Mapping[str, int], k: int) -> tuple[str, ...]:
    if "challengers" not in top:
        raise check.fail(
            ("schedule",),
            "missing key 'challengers': a gauntlet needs the names of the bots "
            "that play the field (challengers: [name, ...])",
        )
    raw = top["challengers"]
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise check.fail(("challengers",), f"expected a non-empty list of bot names, got {_kind(raw)}")
    chosen: list[str] = []
    for index, name in enumerate(raw):
        path: Path_ = ("challengers", index)
        if not isinstance(name, str) or name not in names:
            close = difflib.get_close_matches(str(name), list(names), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise check.fail(path, f"{name!r} is not one of the bots{hint}: expected a bot's name")
        if name in chosen:
            raise check.fail(path, f"{name!r} is listed twice: expected each challenger once")
        chosen.append(name)
    field = len(names) - len(chosen)
    if field < max(1, k - 1):
        raise check.fail(
            ("challengers",),
            f"{len(chosen)} challengers of {len(names)} bots leave a field of {field}: a table is one challenger "
            f"and {k - 1} field bots, so expected at least {max(1, k - 1)} bots that are not challengers",
        )
    return tuple(chosen)


def _rating(check: _Checker, raw: Any, names: Mapping[str, int], seed: int | str, *, secret: bool) -> RatingConfig:
    """The ``rating`` section; ``secret``: deals are dealt per table (a seed secret), so blocks are independent."""
    if raw is None:
        raw = {}
    rating = check.mapping(raw, ("rating",), RATING_KEYS, ", ".join(RATING_KEYS))
    anchor = rating.get("anchor")
    if anchor is not None:
        if not isinstance(anchor, str) or anchor not in names:
            close = difflib.get_close_matches(str(anchor), list(names), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise check.fail(
                ("rating", "anchor"),
                f"{anchor!r} is not one of the bots{hint}: expected a bot's name, or no anchor for the pool mean",
            )
    elo = rating.get("elo", 1500)
    if isinstance(elo, bool) or not isinstance(elo, int | float) or not -10_000 <= elo <= 10_000:
        raise check.fail(("rating", "elo"), f"expected a number (the anchor's or the pool mean's Elo), got {elo!r}")
    bootstrap = check.integer(rating.get("bootstrap", 400), ("rating", "bootstrap"), 0, 100_000)
    if 0 < bootstrap < 20:
        raise check.fail(
            ("rating", "bootstrap"), f"expected 0 (no intervals) or at least 20 resamples, got {bootstrap}"
        )
    interval_seed = rating.get("interval_seed", seed)
    if isinstance(interval_seed, bool) or not isinstance(interval_seed, int | str):
        raise check.fail(("rating", "interval_seed"), f"expected an integer or a string, got {interval_seed!r}")
    model = rating.get("model", DEFAULT_MODEL)
    if model not in RATING_MODELS:
        raise check.fail(("rating", "model"), f"unknown model {model!r}: expected one of {', '.join(RATING_MODELS)}")
    method = rating.get("interval", DEFAULT_INTERVAL)
    if method not in INTERVAL_METHODS:
        raise check.fail(
            ("rating", "interval"), f"unknown interval {method!r}: expected one of {', '.join(INTERVAL_METHODS)}"
        )
    resample = rating.get("resample", "block" if secret else "deal")
    if resample not in RESAMPLE_UNITS:
        raise check.fail(
            ("rating", "resample"), f"unknown unit {resample!r}: expected one of {', '.join(RESAMPLE_UNITS)}"
        )
    if resample == "block" and not secret:
        raise check.fail(
            ("rating", "resample"),
            "'block' treats each table's games of a deal as independent, but without a seed secret every table "
            "plays the same deck for a deal: expected 'deal' (the default), or a seed_secret_env/seed_secret_file",
        )
    return RatingConfig(
        anchor=anchor,
        elo=float(elo),
        bootstrap=bootstrap,
        interval_seed=interval_seed,
        model=model,
        interval=method,
        resample=resample,
    )


def _limits(check: _Checker, raw: Any, path: Path_) -> Limits:
    """``{memory_mb: 512, cpu_seconds: 600, ...}``: each key an integer in its range."""
    keys = ", ".join(Limits.KEYS)
    given = check.mapping(raw, path, Limits.KEYS, keys)
    values: dict[str, int] = {}
    for key, value in given.items():
        values[key] = check.integer(value, (*path, key), Limits.MINIMUM[key], LIMIT_MAXIMUM[key])
    if "open_files" in values and os.name == "posix" and os.geteuid() != 0:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard != resource.RLIM_INFINITY and values["open_files"] > hard:
            raise check.fail(
                (*path, "open_files"), f"expected at most {hard} (this user's hard limit), got {values['open_files']}"
            )
    return Limits(**values)


def _default_isolation(check: _Checker, top: Mapping[str, Any], referee: RefereeConfig) -> tuple[Isolation, str | None]:
    """The league's isolation: as the config says, else ``strict`` wherever this machine can isolate bots and
    ``none`` with a note saying why not (never silently weaker)."""
    if "isolation" in top:
        return _isolation(check, top["isolation"], ("isolation",)), None
    if referee.address is not None and not referee.address.startswith("unix:"):
        return "none", f"bots are not isolated: the referee at {referee.address} is not on a unix: socket"
    return default_isolation()


def _check_level(check: _Checker, raw: Any) -> str:
    if raw not in CHECK_LEVELS:
        raise check.fail(
            ("check",), f"{raw!r}: expected one of {', '.join(CHECK_LEVELS)} (quick: check-bot's quick cases first)"
        )
    return str(raw)


def _isolation(check: _Checker, raw: Any, path: Path_) -> Isolation:
    if raw not in ISOLATIONS:
        raise check.fail(
            path, f"expected strict (each bot sees only its own files and the referee) or none, got {raw!r}"
        )
    return cast(Isolation, raw)


def _network(check: _Checker, raw: Any, path: Path_) -> bool:
    if not isinstance(raw, bool):
        raise check.fail(path, f"expected true or false (false: the bot reaches only the referee), got {_kind(raw)}")
    return raw


def _check_sandboxes(check: _Checker, raws: list[Any], bots: Sequence[BotSpec], referee: RefereeConfig) -> None:
    """Every managed bot's sandbox must be enforceable here: say which key cannot be, never run without it."""
    for index, (raw, entry) in enumerate(zip(raws, bots, strict=True)):
        if not entry.managed:
            continue
        own = raw if isinstance(raw, dict) else {}
        try:
            check_sandbox(entry.sandbox)
        except SandboxUnavailable as exc:
            if exc.key in ("network", "isolation"):
                path: Path_ = ("bots", index, exc.key) if exc.key in own else (exc.key,)
            else:
                in_own = exc.key in (own.get("limits") or {})
                path = ("bots", index, "limits", exc.key) if in_own else ("limits", exc.key)
            raise check.fail(path, f"cannot be enforced on this machine: {exc.reason}") from None
        if referee.address is not None and not referee.address.startswith("unix:"):
            key = "isolation" if entry.sandbox.isolation == "strict" else "network"
            if key == "network" and entry.sandbox.has_network:
                continue
            path = ("bots", index, key) if key in own else (key,)
            what = "an isolated bot" if key == "isolation" else "a bot without network"
            raise check.fail(
                path,
                f"{what} reaches the referee only by a unix: socket: play on the in-process "
                f"referee, or set referee.address to unix:PATH (not {referee.address})",
            )


def _bot(check: _Checker, raw: Any, path: Path_, base: Path, default_sandbox: Sandbox) -> BotSpec:
    kinds = ", ".join(BOT_KINDS)
    bot = check.mapping(raw, path, BOT_KEYS, f"a name and one of {kinds}")
    if "name" not in bot:
        raise check.fail(path, f"missing key 'name': every bot needs a unique name (and one of {kinds})")
    name = bot["name"]
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise check.fail(
            (*path, "name"),
            f"bad name {name!r}: expected 1-40 letters, digits, '_', '.' or '-', starting with a letter or digit",
        )
    given = [k for k in BOT_KINDS if k in bot]
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        raise check.fail(
            (*path, given[1]) if len(given) > 1 else path, f"bot {name!r} has {what}: expected exactly one of {kinds}"
        )
    kind = given[0]
    value = bot[kind]
    vpath = (*path, kind)
    if kind in ("builtin", "remote"):
        for extra in ("cwd", "root", "env", "limits", "network", "isolation"):
            if extra in bot:
                raise check.fail((*path, extra), f"{extra} applies to python and command bots only, not {kind}")

    cwd = _folder(check, bot, "cwd", path, base, "the bot's working folder")
    root = _folder(check, bot, "root", path, base, "the folder that holds the bot")
    env = _env(check, bot["env"], (*path, "env")) if "env" in bot else {}
    in_process = _in_process(check, bot, kind, path)
    limits = _limits(check, bot["limits"], (*path, "limits")) if "limits" in bot else None
    network = _network(check, bot["network"], (*path, "network")) if "network" in bot else None
    isolation = _isolation(check, bot["isolation"], (*path, "isolation")) if "isolation" in bot else None
    sandbox = merge(default_sandbox, limits, network, isolation)

    if kind == "builtin":
        if not isinstance(value, str) or value not in BUILTIN_BOTS:
            raise check.fail(vpath, f"no built-in bot {value!r}: expected one of {', '.join(sorted(BUILTIN_BOTS))}")
        return BotSpec("builtin", name, value, builtin=value)
    if kind == "python":
        spec = check.string(value, vpath, "a Python file (path/bot.py[:Class]) or module:Class")
        python = _python_spec(check, spec, vpath, cwd or base)
        return BotSpec(
            "python", name, spec, python=python, cwd=cwd, env=env, sandbox=sandbox, in_process=in_process, root=root
        )
    if kind == "command":
        argv = _command(check, value, vpath, cwd or base, env)
        return BotSpec(
            "command",
            name,
            "cmd:" + shlex.join(argv),
            command=argv,
            cwd=cwd or base,
            env=env,
            sandbox=sandbox,
            root=root,
        )
    remote = check.mapping(value, vpath, REMOTE_KEYS, "the token the bot connects with")
    if "token" not in remote:
        raise check.fail(vpath, "missing key 'token': expected the token the remote bot connects with")
    token = check.string(remote["token"], (*vpath, "token"), "a token string")
    problem = token_problem(token)
    if problem is not None:
        raise check.fail((*vpath, "token"), problem)
    return BotSpec("remote", name, f"remote:{name}", token=token)


def _folder(check: _Checker, bot: Mapping[str, Any], key: str, path: Path_, base: Path, what: str) -> Path | None:
    """A bot's folder setting ``key`` (relative to the config file), which must exist; None when not set."""
    if key not in bot:
        return None
    folder = Path(check.string(bot[key], (*path, key), "a folder path")).expanduser()
    if not folder.is_absolute():
        folder = base / folder
    if not folder.is_dir():
        raise check.fail((*path, key), f"folder {folder} does not exist: expected {what}")
    return folder


def _env(check: _Checker, raw: Any, path: Path_) -> dict[str, str]:
    """A bot's ``env``: variable names to values (numbers written as text)."""
    if not isinstance(raw, dict):
        raise check.fail(path, f"expected a mapping of VARIABLE: value, got {_kind(raw)}")
    env: dict[str, str] = {}
    for key, val in raw.items():
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise check.fail(path, f"bad variable name {key!r}: expected letters, digits and '_'")
        if isinstance(val, bool) or not isinstance(val, str | int | float):
            raise check.fail((*path, key), f"expected a string or a number, got {_kind(val)}")
        env[key] = str(val)
    return env


def _in_process(check: _Checker, bot: Mapping[str, Any], kind: str, path: Path_) -> bool:
    """A bot's ``in_process``: a python bot only, with nothing that needs a process of its own."""
    if "in_process" not in bot:
        return False
    in_process = bot["in_process"]
    if not isinstance(in_process, bool):
        raise check.fail((*path, "in_process"), f"expected true or false, got {_kind(in_process)}")
    if in_process and kind != "python":
        raise check.fail((*path, "in_process"), f"in_process applies to python bots only, not {kind}")
    for extra in ("cwd", "root", "env", "limits", "network", "isolation"):
        if in_process and extra in bot:
            raise check.fail(
                (*path, extra),
                f"{extra} cannot apply to an in_process bot (it runs inside the referee's process): drop one of them",
            )
    return in_process


def _python_spec(check: _Checker, spec: str, path: Path_, base: Path) -> str:
    """Resolve ``file.py[:Class]`` against ``base`` and check it exists; check ``module:Class`` imports."""
    parts = split_spec(spec)  # the SDK runner's reading of the spec, which it runs
    target, cls = parts.target, parts.name or ""
    if cls and not cls.isidentifier():
        raise check.fail(path, f"{cls!r} is not a class name: expected path/bot.py[:Class] or module:Class")
    if parts.is_file:
        file = Path(target).expanduser()
        if not file.is_absolute():
            file = base / file
        if not file.exists():
            raise check.fail(path, f"file {file} does not exist: expected a Python bot file (path/bot.py[:Class])")
        try:  # a folder, a syntax error, no bot or a missing class: the user's to fix now, not a crashing process
            check_bot_file(file, cls or None, given=target)
        except BotFileError as exc:
            raise check.fail(path, str(exc)) from None
        return f"{file.resolve()}:{cls}" if cls else str(file.resolve())
    if not cls:
        try:  # a folder or a file of another language named without a path separator: say what it is
            if (base / target).exists():
                check_bot_place(base / target, target)
        except BotFileError as exc:
            raise check.fail(path, str(exc)) from None
        raise check.fail(path, f"{spec!r} is neither a .py file nor module:Class: expected path/bot.py or module:Class")
    if not all(part.isidentifier() for part in target.split(".")):
        raise check.fail(path, f"{target!r} is not a module name: expected module:Class")
    try:
        found = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise check.fail(path, f"module {target!r} cannot be found: expected an importable module:Class")
    if found.origin is not None and found.origin.endswith(".py"):
        try:  # the module's own file: compiled and read, not run
            check_bot_file(Path(found.origin), cls)
        except BotFileError as exc:
            raise check.fail(path, str(exc)) from None
    return spec


def _command(check: _Checker, value: Any, path: Path_, cwd: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise check.fail(path, f"cannot split the command line: {exc}") from None
    elif isinstance(value, list) and all(isinstance(a, str | int | float) and not isinstance(a, bool) for a in value):
        argv = [str(a) for a in value]
    else:
        raise check.fail(path, f"expected a command line (a string or a list of strings), got {_kind(value)}")
    if not argv or not argv[0]:
        raise check.fail(path, "the command is empty: expected a program and its arguments")
    program = argv[0]
    if "/" in program or os.sep in program:
        exe = Path(program).expanduser()
        if not exe.is_absolute():
            exe = cwd / exe
        if not exe.is_file():
            raise check.fail(path, f"program {exe} does not exist: expected an executable file")
        if not os.access(exe, os.X_OK):
            raise check.fail(path, f"program {exe} is not executable: expected an executable file (chmod +x)")
    else:
        search = env.get("PATH", os.environ.get("PATH", ""))
        if shutil.which(program, path=search) is None:
            raise check.fail(path, f"{program!r} is not a command found on PATH: expected an installed program")
    return tuple(argv)


def output_folder_of(path: Path) -> Path | None:
    """The output folder a tournament config file names, read leniently (the config need not be valid, e.g. moved
    away from its bots' files); None when ``path`` does not read as a tournament config. Same rule as
    :func:`parse_config`: ``output`` relative to the file's folder, else ``runs/NAME`` beside it."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(data, dict) or "bots" not in data:
        return None
    base = path.resolve().parent
    output = data.get("output")
    if isinstance(output, str) and output.strip():
        out = Path(output).expanduser()
        return out if out.is_absolute() else base / out
    name = data.get("name", path.stem)
    return base / "runs" / str(name).replace(" ", "_")
