"""What a gate is: candidate and baseline, the hypotheses, rules and clock, seed, cap — and what its store means.

A gate is a duplicate match played as a tournament store holds it: each deal
``d`` is one block of games on the same cards, the candidate once in each
seat. At two players the block is ``GameId(table, d, 0)`` and
``GameId(table, d, 1)``. At ``K`` players (``players``) the table is the
candidate and ``K - 1`` copies of the baseline (``name.1``, ``name.2``, ...),
and the block is the ``K`` rotations: the copies are the same bot, so the
candidate in each seat is every seating that differs (docs/gate.md).

With a named ``field`` (``K - 2`` other bots) the table is the candidate, one
baseline and the field, all different, so a block is the balanced seat design
(:func:`skyjo_ref.seating.design`: every bot in every seat and every ordered
pair neighbours equally often, ``K(K-1)`` games a deal), and the block score
is the candidate's result against the baseline alone (docs/gate.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skyjo_bot.loader import split_spec
from skyjo_bot.types import MAX_PLAYERS, MIN_PLAYERS, Rules, TimeControl

from skyjo_ref.errors import BotSpecError, UsageError
from skyjo_ref.execution.types import RefereeConfig
from skyjo_ref.seating import design
from skyjo_ref.stats.sprt import ELO_MODELS, Hypotheses
from skyjo_ref.tournament.schedule import GameId, deal_match_seed
from skyjo_ref.tournament.shard import Shard
from skyjo_ref.tournament.store import Store, open_run_store
from skyjo_ref.tournament.tables import RatingConfig

if TYPE_CHECKING:  # a tournament config (bot checks, the referee's guard) loads when a gate plays, not for --help
    from skyjo_ref.players import BotSpec
    from skyjo_ref.sandbox import Isolation
    from skyjo_ref.tournament.config import TournamentConfig

FORMAT: Final = "skyjo-gate/1"

#: The two usual questions, as (elo0, elo1) in logistic Elo; see docs/gate.md for why these bounds.
PRESETS: Final[dict[str, tuple[float, float]]] = {
    "gain": (0.0, 20.0),  # does the candidate gain? H0: equal, H1: 20 Elo better
    "no-regression": (-20.0, 0.0),  # is it no worse? H0: 20 Elo worse, H1: equal
}
DEFAULT_PRESET: Final = "no-regression"


def hypotheses_of(
    preset: str | None, elo0: float | None, elo1: float | None, alpha: float, beta: float, model: str
) -> Hypotheses:
    """The gate's hypotheses from a preset (default :data:`DEFAULT_PRESET`) whose bounds ``elo0``/``elo1``
    override, checked (:class:`UsageError` naming the flags)."""
    if preset is not None and preset not in PRESETS:
        raise UsageError(f"--preset {preset!r}: expected one of {', '.join(PRESETS)}")
    if model not in ELO_MODELS:
        raise UsageError(f"--elo-model {model!r}: expected one of {', '.join(ELO_MODELS)}")
    base0, base1 = PRESETS[preset or DEFAULT_PRESET]
    if preset is None and (elo0 is not None) != (elo1 is not None):
        raise UsageError("give both --elo0 and --elo1 (or a --preset, whose bounds either one overrides)")
    h = Hypotheses(
        elo0=base0 if elo0 is None else elo0,
        elo1=base1 if elo1 is None else elo1,
        alpha=alpha,
        beta=beta,
        model="normalized" if model == "normalized" else "logistic",
    )
    try:
        h.check()
    except ValueError as exc:
        raise UsageError(f"{exc} (--elo0, --elo1, --alpha, --beta)") from None
    return h


def _clean(name: str) -> str:
    """A bot name fit for game keys and file names (letters, digits, ``_ . -``; at most 30 characters)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:30]
    return cleaned if cleaned and cleaned[0].isalnum() else f"bot{cleaned}"[:30]


def field_names(candidate: BotSpec, baseline: BotSpec, field: tuple[BotSpec, ...]) -> tuple[str, ...]:
    """The field bots' names in the store: their own, or ``NAME.fieldI`` (I from 1, in ``--field`` order)
    where it is taken by the candidate, the baseline or an earlier field bot (a field of two ``random``)."""
    taken = set(table_names(candidate, baseline))
    names: list[str] = []
    for i, spec in enumerate(field, start=1):
        name = _clean(spec.name)
        while name in taken:  # (a loop: a bot may be called NAME.fieldI itself)
            name = f"{name}.field{i}"
        taken.add(name)
        names.append(name)
    return tuple(names)


def table_names(candidate: BotSpec, baseline: BotSpec) -> tuple[str, str]:
    """The candidate's and the baseline's names in the store (distinct even for two bots of one name)."""
    c, b = _clean(candidate.name), _clean(baseline.name)
    if c == b:
        c, b = f"{c}.candidate", f"{b}.baseline"
    return c, b


def _identity(spec: BotSpec) -> dict[str, Any]:
    """What a bot is, for the fingerprint: its kind, what it runs and, for a bot file, a digest of its text."""
    out: dict[str, Any] = {"kind": spec.kind, "runs": spec.describe()}
    if spec.kind == "python" and spec.python is not None:
        parts = split_spec(spec.python)
        file = Path(parts.target)
        if parts.is_file and file.is_file():
            out["sha256"] = hashlib.sha256(file.read_bytes()).hexdigest()
    return out


def bot_from_text(text: str, role: str, in_process: bool, isolation: Isolation) -> BotSpec:
    """The bot ``text`` names (from the command line; ``role`` says which, in the errors); with ``in_process``
    a Python bot plays inside this process (same games, same verdict: neither ``in_process`` nor the isolation
    is part of the gate's fingerprint). A remote bot is refused: the gate starts its bots itself."""
    from skyjo_ref.botfiles import BotLinkError, check_links
    from skyjo_ref.players import parse_bot_spec

    try:
        spec = parse_bot_spec(text)
    except BotSpecError as exc:
        raise BotSpecError(f"{role}: {exc}") from None
    if in_process and spec.kind == "python":
        spec = dataclasses.replace(spec, in_process=True)
    if spec.managed:
        spec = dataclasses.replace(spec, sandbox=dataclasses.replace(spec.sandbox, isolation=isolation))
    try:  # before any game: an isolated bot's links stay in its folder
        check_links(spec)
    except BotLinkError as exc:
        raise UsageError(f"{role}: {exc}") from None
    if spec.kind == "remote":
        raise UsageError(
            f"{role} {text!r}: the gate starts its bots itself; remote bots are not supported yet: "
            "give a built-in bot, a Python file, module:Class or 'cmd:COMMAND'"
        )
    return spec


def players_at_table(given: int | None, field: list[str]) -> int:
    """The table's size: ``--players-per-game``, or 2 + the ``--field`` bots when it is not given; checked against
    the field."""
    players = given if given is not None else 2 + len(field)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise UsageError(f"--players-per-game {players}: expected {MIN_PLAYERS} to {MAX_PLAYERS} seats at the table")
    if field and players == 2:
        raise UsageError(
            f"--field {field[0]!r} at --players-per-game 2: a field needs 3 or more players "
            "(the candidate, the baseline and players-2 --field bots)"
        )
    if field and len(field) != players - 2:
        given_text = f"{len(field)} --field bot{'s' if len(field) != 1 else ''}"
        raise UsageError(
            f"--players-per-game {players} with {given_text}: expected {players - 2} (players-2: the table is the "
            "candidate, the baseline and the field)"
        )
    return players


@dataclass(frozen=True, slots=True)
class GateSpec:
    """A checked gate: everything that decides its games and its verdict."""

    candidate: BotSpec
    baseline: BotSpec
    hypotheses: Hypotheses
    rules: Rules
    time_control: TimeControl
    seed: str
    max_games: int
    concurrency: int
    output: Path
    luck: bool = False
    connect_timeout_s: float = 30.0
    shard: Shard | None = None  # play only this shard's deals (see docs/gate.md, "Shards")
    players: int = 2  # seats at the table: the candidate and players - 1 copies of the baseline
    field: tuple[BotSpec, ...] = ()  # or the candidate, the baseline and these players - 2 bots
    check: bool = False  # check-bot's quick cases on each bot before the first game (not part of the fingerprint)

    def __post_init__(self) -> None:
        if self.field and len(self.field) != self.players - 2:
            raise ValueError(f"a field of {len(self.field)} at {self.players} players: expected {self.players - 2}")

    @property
    def names(self) -> tuple[str, str]:
        """The candidate's and the baseline's names (at K players with copies, the copies' common stem)."""
        return table_names(self.candidate, self.baseline)

    @property
    def field_names(self) -> tuple[str, ...]:
        return field_names(self.candidate, self.baseline, self.field)

    @property
    def seating(self) -> str:
        """The seat design of a block: the rotations (two players, or copies), balanced with a field."""
        return "balanced" if self.field else "rotations"

    @property
    def seatings(self) -> range:
        """The seating indices of one block (:func:`skyjo_ref.seating.design`)."""
        return design(self.players, self.seating)

    @property
    def block_games(self) -> int:
        """Games a deal: ``players`` (rotations), or ``players (players - 1)`` (balanced, with a field)."""
        return len(self.seatings)

    @property
    def seat_names(self) -> tuple[str, ...]:
        """Every bot at the table: the candidate, then the baseline (or its ``players - 1`` copies), then the field."""
        cand, base = self.names
        if self.players == 2:
            return (cand, base)
        if self.field:
            return (cand, base, *self.field_names)
        return (cand, *(f"{base}.{i}" for i in range(1, self.players)))

    @property
    def max_blocks(self) -> int:
        return self.max_games // self.block_games

    @property
    def table(self) -> tuple[str, ...]:
        return tuple(sorted(self.seat_names))

    def deals(self) -> list[int]:
        """The deals this gate counts, in order (a shard's: every N-th)."""
        every = range(self.max_blocks)
        if self.shard is None:
            return list(every)
        return [d for d in every if d % self.shard.count == self.shard.index - 1]

    def games(self) -> list[GameId]:
        """The schedule: deal by deal, the seatings of a deal (its block) together."""
        return [GameId(self.table, deal, seating) for deal in self.deals() for seating in self.seatings]

    def seed_of(self, game: GameId) -> str:
        return deal_match_seed(self.seed, game.deal)

    def fingerprint(self) -> dict[str, Any]:
        """What the stored games and verdict mean: a rerun with any of it changed is refused.

        ``max_games``, ``concurrency`` and ``shard`` are not in it: a truncated gate
        can be continued with a higher cap, at any concurrency, and shards merge
        into the store of the whole gate. ``field`` and ``seating`` are in it only
        with a field: the fingerprints of gates without one are unchanged.
        """
        h = self.hypotheses
        cand, base = self.names
        more: dict[str, Any] = {} if self.players == 2 else {"seats": list(self.seat_names)}
        if self.field:
            more["field"] = [
                {"name": name, **_identity(spec)} for name, spec in zip(self.field_names, self.field, strict=True)
            ]
            more["seating"] = self.seating
        return {
            **more,
            "format": FORMAT,
            "candidate": {"name": cand, **_identity(self.candidate)},
            "baseline": {"name": base, **_identity(self.baseline)},
            "rules": self.rules.options(),
            "players_per_game": self.players,
            "time_control": {key: getattr(self.time_control, key) for key in TimeControl.KEYS},
            "seed": self.seed,
            "elo0": h.elo0,
            "elo1": h.elo1,
            "alpha": h.alpha,
            "beta": h.beta,
            "elo_model": h.model,
            "luck_adjusted": self.luck,
        }

    def open_store(
        self,
        new: bool = False,
        on_wait: Callable[[str], None] | None = None,
        on_set_aside: Callable[[Path], None] | None = None,
    ) -> Store:
        """The gate's store, bound to its fingerprint, with what ``ratings`` and ``report`` read of a gate (its
        writer lock held; :func:`~skyjo_ref.tournament.store.open_run_store` says what ``new`` and the callbacks do)."""
        return open_run_store(
            self.output,
            self.fingerprint(),
            what="this gate",
            info={
                "name": f"gate {self.names[0]} vs {self.names[1]}",
                "bots": list(self.seat_names),
                "rating": {"anchor": self.names[1], "elo": 0.0, "bootstrap": 400, "interval_seed": self.seed},
            },
            new=new,
            on_wait=on_wait,
            on_set_aside=on_set_aside,
        )

    def tournament_config(self) -> TournamentConfig:
        """The same games as a tournament config of the table's bots: what the referee backend plays from."""
        from skyjo_ref.tournament.config import TournamentConfig

        cand, base = self.names
        if self.field:
            bots = (
                dataclasses.replace(self.candidate, name=cand),
                dataclasses.replace(self.baseline, name=base),
                *(dataclasses.replace(bot, name=name) for name, bot in zip(self.field_names, self.field, strict=True)),
            )
        else:
            bots = (
                dataclasses.replace(self.candidate, name=cand),
                *(dataclasses.replace(self.baseline, name=name) for name in self.seat_names[1:]),
            )
        return TournamentConfig(
            path=self.output / "gate",
            name="gate",
            rules=self.rules,
            players_per_game=self.players,
            deals=max(self.max_blocks, 1),
            seed=self.seed,
            concurrency=self.concurrency,
            time_control=self.time_control,
            connect_timeout_s=self.connect_timeout_s,
            output=self.output,
            referee=RefereeConfig(),
            rating=RatingConfig(bootstrap=0),
            bots=bots,
            seating=self.seating,
        )
