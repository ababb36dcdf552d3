"""A PettingZoo AEC environment on skyjo-ref's own rules engine.

One episode is one whole game (rounds until a total reaches ``end_score``),
exactly as the referee plays it: same engine, same dealer, same seeds, so a
game played here and the same game played through the referee give the same
``skyjo-game/1`` record (:meth:`SkyjoEnv.record`). Observations hold exactly
what ``Game.view(seat)`` shows (docs/learning.md lists the fields); for speed
they are encoded from the engine's public events by
:class:`~skyjo_ref.env.encoding.TableEncoder`, and the structured ``View`` is
built only when :meth:`SkyjoEnv.view` asks for it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, Literal

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from skyjo_bot.types import MAX_PLAYERS, MIN_PLAYERS, Action, IllegalActionError, Rules, View

from skyjo_ref.env.encoding import (
    ACTION_INDEX,
    ACTIONS,
    MASK_CACHE_SIZE,
    NUM_ACTIONS,
    TableEncoder,
    observation_bounds,
    shared_action_mask,
)
from skyjo_ref.records import game_to_record
from skyjo_ref.rules.engine import Game, SeededDealer

RENDER_MODES: Final = ("human", "ansi")
RewardKind = Literal["score", "relative", "rank"]
REWARDS: Final[tuple[RewardKind, ...]] = ("score", "relative", "rank")
Observation = dict[str, npt.NDArray[Any]]
_NO_ACTIONS: Final = shared_action_mask(())  # the mask of a seat with no decision due
#: id(legal tuple) -> its mask, for every environment: the engine's legal tuples are cached (one per
#: decision and grid), so after a warm-up a mask costs one dict lookup instead of hashing the tuple.
_MASK_OF_LEGAL: dict[int, npt.NDArray[np.int8]] = {}
_LEGAL_KEPT: list[tuple[Action, ...]] = []  # the tuples of _MASK_OF_LEGAL, kept alive


def agent_name(seat: int) -> str:
    return f"player_{seat}"


def resolve_rules(rules: Rules | str | Mapping[str, Any] | None) -> Rules:
    """Rules from a :class:`Rules`, a preset name (``"french"``) or a record-style mapping."""
    if rules is None:
        return Rules()
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return Rules.from_dict({"preset": rules})
    return Rules.from_dict(rules)


class SkyjoEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type hints
    """Skyjo for 2-8 players, one agent per seat (``player_0`` ... ``player_{n-1}``).

    * ``observe(agent)``: ``{"observation": float32[34 + 41n], "action_mask": int8[26]}``.
    * ``step(i)``: plays :data:`~skyjo_ref.env.encoding.ACTIONS` ``[i]`` for the due seat;
      an illegal action raises :class:`~skyjo_bot.types.IllegalActionError` and changes nothing.
    * ``view(agent)``: the structured :class:`~skyjo_bot.types.View` the observation was built from.
    * rewards (``reward=``): ``"score"`` (default) minus each round's score at the end of
      each round; ``"relative"`` minus (own round score - the mean of the others');
      ``"rank"`` only at the game's end, +1 for first place to -1 for last.
    * ``max_steps``: truncate a game after that many steps (default: none; every
      game ends unless a policy refuses to reveal its cards for ever).
    * ``pure_python``: True encodes observations in pure Python (the reference), False with the
      compiled catch-up where it is built; None (default) the compiled one unless the
      ``SKYJO_ENV_PURE_PYTHON`` environment variable is set. Both give the same vectors.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "skyjo_v0",
        "render_modes": list(RENDER_MODES),
        "render_fps": 1,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        num_players: int = 2,
        rules: Rules | str | Mapping[str, Any] | None = None,
        *,
        reward: RewardKind = "score",
        players: Sequence[str] | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
        pure_python: bool | None = None,
    ) -> None:
        super().__init__()
        if (
            isinstance(num_players, bool)
            or not isinstance(num_players, int)
            or not (MIN_PLAYERS <= num_players <= MAX_PLAYERS)
        ):
            raise ValueError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, got {num_players!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of human, ansi or None, got {render_mode!r}")
        if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive integer or None, got {max_steps!r}")
        if players is not None and len(players) != num_players:
            raise ValueError(f"{len(players)} player names for {num_players} seats")
        self.num_players = num_players
        self.rules = resolve_rules(rules)
        self.reward_kind: RewardKind = reward
        self.players = tuple(players) if players is not None else None
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.possible_agents = [agent_name(s) for s in range(num_players)]
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        low, high = observation_bounds(num_players, self.rules)
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._encoder = encoder = TableEncoder(num_players, self.rules, pure_python=pure_python)
        self._table = encoder.table
        if self._table is not None:  # the compiled observe: the buffer, per other seat a stage, the masks
            stages = (encoder._buffer, *(np.zeros(encoder.size, dtype=np.float32) for _ in range(1, num_players)))
            self._table.set_observe(stages, _MASK_OF_LEGAL)
        self._seeds: random.Random | None = None
        self.game: Game | None = None

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game.

        ``seed`` seeds the deal exactly as ``Game(n, rules, seed=seed)`` (and the
        referee's ``GameSetup(seed=...)``) do; without one, each game's seed is
        drawn from the last seed given (or from the system when none was).
        ``options={"game_seed": S}`` deals with seed ``S`` (an int or a string,
        such as a match's ``deal_seed``) without touching that sequence.
        """
        if seed is not None:
            self._seeds = random.Random(seed)
        if options and options.get("game_seed") is not None:
            game_seed: int | str = options["game_seed"]
        elif seed is not None:
            game_seed = seed
        else:
            if self._seeds is None:
                self._seeds = random.Random(random.SystemRandom().randrange(2**63))
            game_seed = self._seeds.randrange(2**63)
        self.game_seed = game_seed
        self.game = Game(self.num_players, self.rules, dealer=SeededDealer(game_seed), players=self.players)
        self._steps = 0  # counted only under max_steps
        self._finished = False  # every agent terminated or truncated
        self._plain = self.max_steps is None and self.render_mode != "human"  # no step counting, no printing
        self._cache: tuple[int, list[Any] | None, int, View] | None = None  # (seat, events, len(events), view)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rewarded = False  # whether self.rewards holds anything but zeros
        self._quiet = self._plain  # _plain and not _rewarded: the common step's one test
        self.agent_selection = self.possible_agents[self.game.seat]

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game

    def view(self, agent: str) -> View:
        """What ``agent``'s seat may see now: the structured form of its observation."""
        game = self._game()
        seat = self._seat_of[agent]
        cache = self._cache
        events = game.events  # every step adds events: their count tells whether the game moved on
        count = 0 if events is None else len(events)
        if cache is not None and cache[0] == seat and cache[1] is events and cache[2] == count:
            return cache[3]
        view = game.view(seat)
        self._cache = (seat, events, count, view)
        return view

    def observe(self, agent: str) -> Observation:
        """``agent``'s observation (a fresh array) and action mask (a shared read-only array), without a ``View``.

        The hot path of training: :meth:`TableEncoder.observe` written out here
        (catch up with the game's events, gather the buffer into the seat's order); where the
        compiled part is built, ``Table.observe`` does all of it for the due seat in one call.
        """
        table = self._table
        if table is not None:  # compiled (_fastobs.c): the catch-up, and the due seat's whole observation
            out: Observation | None = table.observe(self.game, self._seat_of[agent], self._encoder)
            if out is not None:  # None: no game yet, another seat, or a new legal set (below)
                return out
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before using the environment")
        seat = self._seat_of[agent]
        encoder = self._encoder
        if table is None:
            events = game.events
            if events is not encoder._events or len(events) != encoder._seen:
                encoder._catch_up(game, events)
        order = encoder._orders[seat]
        observation = encoder._buffer.copy() if order is None else encoder._buffer[order]
        if seat != game.seat or game.over:
            encoder.hide_turn(observation)
            return {"observation": observation, "action_mask": _NO_ACTIONS}
        legal = game.legal_actions()
        mask = _MASK_OF_LEGAL.get(id(legal))  # the engine hands out cached tuples: look them up by identity
        if mask is None:
            if len(_MASK_OF_LEGAL) >= MASK_CACHE_SIZE:
                _MASK_OF_LEGAL.clear()
                _LEGAL_KEPT.clear()
            mask = _MASK_OF_LEGAL[id(legal)] = shared_action_mask(legal)
            _LEGAL_KEPT.append(legal)  # keeps the tuple alive, so its id is never another's
        return {"observation": observation, "action_mask": mask}

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self._finished:
            self._was_dead_step(action)
            return
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before using the environment")
        try:
            chosen = ACTIONS[action]  # type: ignore[index]  # None and other types raise TypeError
            if action < 0:  # type: ignore[operator]  # ACTIONS[-1] exists, action -1 does not
                raise IndexError
        except (IndexError, TypeError):
            if action is None:
                raise IllegalActionError(
                    f"{agent}: action None is only for a finished agent; expected 0-{NUM_ACTIONS - 1}"
                ) from None
            raise IllegalActionError(
                f"{agent}: action {action!r} is not an action index: expected an integer 0-{NUM_ACTIONS - 1}"
            ) from None
        rounds = game.rounds
        played = len(rounds)
        game.apply(chosen)  # IllegalActionError (a ValueError) when the mask says 0: nothing changes
        self._cumulative_rewards[agent] = 0.0
        if self._quiet and not game.over and len(rounds) == played:
            self.agent_selection = self.possible_agents[game.seat]  # most steps: the next decision's agent
            return
        if self._rewarded:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
            self._quiet = self._plain
        if game.over or len(rounds) != played:
            self._reward_round(game, played - 1)
        if game.over:
            self.terminations = dict.fromkeys(self.agents, True)
            self._finished = True
        elif self.max_steps is not None and self._count_step():
            self.truncations = dict.fromkeys(self.agents, True)
            self._finished = True
        else:
            self.agent_selection = self.possible_agents[game.seat]
        if self._rewarded:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _count_step(self) -> bool:
        """Count a step under ``max_steps``: True when the game is to be truncated."""
        self._steps += 1
        return self.max_steps is not None and self._steps >= self.max_steps

    def _reward_round(self, game: Game, index: int) -> None:
        n = self.num_players
        agents = self.possible_agents
        if self.reward_kind == "rank":
            if not game.over:
                return
            assert game.ranks is not None
            self.rewards = {agents[s]: 1.0 - 2.0 * (game.ranks[s] - 1) / (n - 1) for s in range(n)}
        else:
            scores = game.rounds[index].scores
            assert scores is not None
            if self.reward_kind == "score":
                self.rewards = {agents[s]: float(-scores[s]) for s in range(n)}
            else:
                total = sum(scores)
                self.rewards = {agents[s]: -(scores[s] - (total - scores[s]) / (n - 1)) for s in range(n)}
        self._rewarded = True
        self._quiet = False

    # ------------------------------------------------------------------ records and text

    def record(self, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The game so far as a ``skyjo-game/1`` record (a finished game replays with ``skyjo-ref replay``)."""
        game = self._game()
        return game_to_record(game, {"source": "skyjo_ref.env", "game_seed": self.game_seed, **(meta or {})})

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = render_text(self._game())
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def action_index(action: Action) -> int:
    """The index of ``action`` in the action space (the inverse of ``ACTIONS[i]``)."""
    return ACTION_INDEX[action]


def render_text(game: Game) -> str:
    """The table as the public sees it (hidden cards ``?``), plus the card in hand."""
    view = game.view(game.seat)
    lines = [f"round {view.round}, totals {list(view.totals)}, discard top {view.discard_top}"]
    if game.over:
        lines.append(f"game over: ranks {game.ranks}, winners {game.winners}")
    else:
        hand = "" if view.hand is None else f", holding {view.hand}"
        lines.append(f"{game.players[game.seat]} to {view.decision.value}{hand}")
    for seat, grid in enumerate(view.grids):
        lines.append(f"{game.players[seat]}:")
        lines.extend("  " + row for row in grid.render().splitlines())
    return "\n".join(lines)


def legal_indices(mask: npt.NDArray[np.int8]) -> list[int]:
    """The legal action indices of a mask, as Python ints."""
    return [int(i) for i in np.flatnonzero(mask)]
