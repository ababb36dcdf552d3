"""A Gymnasium single-agent wrapper: one learning seat, the other seats played by bots.

The other seats are any :class:`skyjo_bot.Bot` (built-in names such as
``"greedy"``, bot instances, or SDK bot files loaded with ``skyjo_bot.loader``),
called in-process with the :class:`~skyjo_bot.types.View` of their seat, as the
referee's in-process seats call them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
from skyjo_bot import Bot
from skyjo_bot.types import Action, ActionKind, GameResult, GameStart, Rules, View

from skyjo_ref.bots import BUILTIN_BOTS, make_builtin
from skyjo_ref.env.aec import Observation, RewardKind, SkyjoEnv
from skyjo_ref.env.encoding import ACTION_INDEX, ACTIONS, NUM_ACTIONS


def default_action(view: View) -> Action:
    """What the referee plays for a seat whose answer is illegal (the match runner's rule, which
    this room may not import; a test checks they agree): a reveal when one is legal, else draw,
    else the first legal action."""
    legal = view.legal_actions
    for action in legal:
        if action.kind is ActionKind.REVEAL:
            return action
    draw = Action.draw()
    return draw if draw in legal else legal[0]


def make_bot(spec: Bot | str, seed: int | str | None = None) -> Bot:
    """A bot from an instance, a built-in name (``"greedy"``) or an SDK bot spec (``path/bot.py[:Name]``)."""
    if isinstance(spec, Bot):
        return spec
    if isinstance(spec, str) and spec in BUILTIN_BOTS:
        return make_builtin(spec, seed)
    from skyjo_bot.loader import load_bot

    return load_bot(spec)


class SkyjoGymEnv(gymnasium.Env[Observation, np.int64]):
    """Skyjo for one learner in seat ``seat``; ``opponents`` play the other seats, in seat order.

    ``reset`` and ``step`` return the learner's observation (the same dict as
    :class:`SkyjoEnv`'s, its mask a fresh writable copy); the reward of a step is everything the learner
    earned since its last decision (see ``reward`` in :class:`SkyjoEnv`).
    ``info["view"]`` is the learner's structured :class:`~skyjo_bot.types.View`.

    An action the mask forbids is treated as the referee treats it
    (``illegal="default"``): the referee's default action is played instead,
    ``illegal_penalty`` is taken off the step's reward and ``info["illegal"]``
    is True. ``illegal="raise"`` raises :class:`~skyjo_bot.types.IllegalActionError`.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "render_fps": 1}  # noqa: RUF012 - gymnasium's name

    def __init__(
        self,
        opponents: Sequence[Bot | str] = ("greedy",),
        rules: Rules | str | Mapping[str, Any] | None = None,
        *,
        seat: int = 0,
        reward: RewardKind = "score",
        max_steps: int | None = None,
        illegal: Literal["default", "raise"] = "default",
        illegal_penalty: float = 1.0,
        render_mode: str | None = None,
    ) -> None:
        if illegal not in ("default", "raise"):
            raise ValueError(f"illegal must be 'default' or 'raise', got {illegal!r}")
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        num_players = len(opponents) + 1
        if not 0 <= seat < num_players:
            raise ValueError(f"seat must be 0-{num_players - 1} for {len(opponents)} opponents, got {seat!r}")
        self.aec = SkyjoEnv(num_players, rules, reward=reward, max_steps=max_steps, render_mode=render_mode)
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        self._specs = list(opponents)
        self.opponents: dict[int, Bot] = {}
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self.render_mode = render_mode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        aec = self.aec
        aec.reset(seed=seed, options=options)
        others = [s for s in range(aec.num_players) if s != self.seat]
        # built-in names are made afresh each episode, seeded from the game's seed (an episode is a
        # function of its seed); bot instances and bot files are made once and kept
        self.opponents = {
            s: make_bot(spec, f"{aec.game_seed}/{s}")
            if spec in BUILTIN_BOTS
            else self.opponents.get(s) or make_bot(spec)
            for s, spec in zip(others, self._specs)
        }
        game = aec._game()
        for s, bot in self.opponents.items():
            bot.on_game_start(GameStart(str(aec.game_seed), s, game.players, aec.rules))
        self._play_others()
        return self._observe(), self._info()

    def step(self, action: int | np.integer[Any]) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        aec = self.aec
        index = int(action)
        view = aec.view(self.agent)
        illegal = not 0 <= index < NUM_ACTIONS or ACTIONS[index] not in view.legal_actions
        if illegal and self.illegal == "default":
            index = ACTION_INDEX[default_action(view)]
        aec.step(index)
        self._play_others()
        reward = float(aec._cumulative_rewards[self.agent]) - (self.illegal_penalty if illegal else 0.0)
        aec._cumulative_rewards[self.agent] = 0.0
        terminated = aec.terminations[self.agent]
        truncated = aec.truncations[self.agent]
        if terminated:
            game = aec._game()
            assert game.ranks is not None and game.winners is not None
            result = GameResult(str(aec.game_seed), tuple(game.totals), tuple(game.ranks), tuple(game.winners))
            for bot in self.opponents.values():
                bot.on_game_over(result)
        info = self._info()
        if illegal:
            info["illegal"] = True
        return self._observe(), reward, terminated, truncated, info

    def _observe(self) -> Observation:
        """The learner's observation with a writable copy of the mask: Gymnasium asks for new data on every call."""
        observation = self.aec.observe(self.agent)
        observation["action_mask"] = observation["action_mask"].copy()
        return observation

    def _play_others(self) -> None:
        aec = self.aec
        while aec.agent_selection != self.agent and not (aec.terminations[self.agent] or aec.truncations[self.agent]):
            agent = aec.agent_selection
            bot = self.opponents[aec.possible_agents.index(agent)]
            aec.step(ACTION_INDEX[bot.decide(aec.view(agent))])

    def _info(self) -> dict[str, Any]:
        return {"view": self.aec.view(self.agent)}

    def render(self) -> str | None:
        return self.aec.render()

    def record(self, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The episode's ``skyjo-game/1`` record (see :meth:`SkyjoEnv.record`)."""
        return self.aec.record(meta)
