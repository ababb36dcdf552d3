"""skyjo_ref.env: PettingZoo's and Gymnasium's own environment checks, the encoding, rewards, and the
promise that a game played through the environment is the game the referee plays."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test
from skyjo_bot import Bot
from skyjo_bot.types import IllegalActionError, Rules
from skyjo_ref.bots import make_builtin
from skyjo_ref.env import (
    ACTIONS,
    GYM_ID,
    NUM_ACTIONS,
    SkyjoEnv,
    SkyjoGymEnv,
    action_index,
    encode_view,
    field_offsets,
    observation_size,
)
from skyjo_ref.env.single import default_action as env_default_action
from skyjo_ref.match import (
    InProcessSeat,
    MatchSpec,
    SeatSpec,
    bot_seed,
    builtin_seat,
    deal_seed,
    default_action,
    plan_game,
    run_match,
)
from skyjo_ref.records import replay

ROOT = Path(__file__).resolve().parents[1]


def random_play(env: SkyjoEnv, rng: random.Random) -> None:
    """Random legal actions until every agent is done (the AEC loop, finished agents stepped with None)."""
    for _agent in env.agent_iter():
        obs, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))


# ------------------------------------------------------------------ PettingZoo's and Gymnasium's own tests


@pytest.mark.parametrize(("players", "rules"), [(2, "official"), (3, "french"), (8, "slovenian")])
def test_pettingzoo_api_test(players: int, rules: str) -> None:
    api_test(SkyjoEnv(players, rules), num_cycles=200)


def test_pettingzoo_seed_test() -> None:
    seed_test(lambda: SkyjoEnv(3), num_cycles=300)


def test_pettingzoo_render_test() -> None:
    # bombardment_test does not apply: it expects step() to return the next observation (the pre-1.0
    # API) and array observations; max_cycles_test, parallel_api_test and state_test need a parallel
    # API or a global state (docs/learning.md says why this turn-based game of hidden cards has neither).
    render_test(lambda render_mode=None: SkyjoEnv(2, render_mode=render_mode))


def test_gymnasium_check_env_on_the_wrapper() -> None:
    check_env(gymnasium.make(GYM_ID, opponents=["greedy"]).unwrapped)
    check_env(SkyjoGymEnv(["random", "greedy"], seat=2, rules="indonesian", reward="rank"))


def test_the_room_imports_only_the_engine_records_bots_and_the_sdk_types() -> None:
    code = (
        "import sys, skyjo_ref.env; "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('skyjo_ref', 'grpc', 'skyjo_proto')))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(done.stdout.split())
    allowed = {"skyjo_ref", "skyjo_ref.rules", "skyjo_ref.rules.engine", "skyjo_ref.records", "skyjo_ref.bots"}
    assert {m for m in loaded if not m.startswith(("skyjo_ref.env", "skyjo_ref.bots."))} <= allowed, loaded


# ------------------------------------------------------------------ observations


def test_the_encoding_is_the_views_at_every_step_for_every_seat() -> None:
    for players, preset in [(2, "official"), (3, "french"), (5, "slovenian"), (8, "indonesian")]:
        env = SkyjoEnv(players, preset)
        rng = random.Random(players)
        env.reset(seed=players)
        assert env.game is not None
        while not env.game.over:
            for agent in env.possible_agents:
                obs = env.observe(agent)
                view = env.view(agent)
                assert obs["observation"].shape == (observation_size(players),)
                np.testing.assert_array_equal(obs["observation"], encode_view(view))
                legal = {action_index(a) for a in view.legal_actions}
                assert set(np.flatnonzero(obs["action_mask"]).tolist()) == legal
                assert env.observation_space(agent).contains(obs)
            env.step(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))


TABLES: list[tuple[int, Rules | str]] = [
    (2, "official"),
    (3, "indonesian"),
    (4, Rules(column_clear=False)),
    (5, "french"),
    (6, Rules(clear_on_final_reveal=False, end_score=60)),
    (7, "slovenian"),
    (8, "turkish"),
]


@pytest.mark.parametrize("pure_python", [False, True], ids=["compiled", "pure-python"])
@pytest.mark.parametrize(("players", "rules"), TABLES)
def test_the_fast_encoding_is_the_encoding_of_game_view_at_every_step(
    players: int, rules: Rules | str, pure_python: bool
) -> None:
    # observe() encodes from the engine's public events, never through a View: at every step, for
    # every seat, it must equal encode_view(Game.view(seat)); some steps observe nobody, so the
    # encoder also catches up over several steps (and over reshuffles, round ends, the game's end).
    # Both catch-ups: the compiled one (_fastobs.c, what runs where it is built) and the Python reference.
    env = SkyjoEnv(players, rules, pure_python=pure_python)
    assert (env._encoder.table is None) is pure_python, "the compiled catch-up is not built: see _fastobs tests"
    rng = random.Random(players)
    kinds: set[str] = set()
    for game_number in range(2 if players <= 4 else 1):
        env.reset(seed=100 * players + game_number)
        game = env.game
        assert game is not None
        while True:
            if rng.random() < 0.7 or game.over:
                for seat, agent in enumerate(env.possible_agents):
                    np.testing.assert_array_equal(env.observe(agent)["observation"], encode_view(game.view(seat)))
            if game.over:
                break
            legal = game.legal_actions()
            env.step(action_index(legal[rng.randrange(len(legal))]))
        assert game.events is not None
        kinds |= {event.kind.value for event in game.events}
    assert {"reveal", "swap", "discard", "take", "draw", "round_end", "final_reveal"} <= kinds
    if players == 8:  # these seeds also cover a reshuffle and a cleared column
        assert {"reshuffle", "column_cleared"} <= kinds


@pytest.mark.parametrize("pure_python", [False, True], ids=["compiled", "pure-python"])
def test_the_fast_encoding_catches_up_after_the_events_are_drained(pure_python: bool) -> None:
    env = SkyjoEnv(3, pure_python=pure_python)
    env.reset(seed=5)
    game = env.game
    assert game is not None
    rng = random.Random(5)
    step = 0
    while not game.over:
        step += 1
        if step % 50 == 0:
            game.drain_events()  # a new events list: the encoder reads the table again
        legal = game.legal_actions()
        env.step(action_index(legal[rng.randrange(len(legal))]))
        for seat, agent in enumerate(env.possible_agents):
            np.testing.assert_array_equal(env.observe(agent)["observation"], encode_view(game.view(seat)))


def test_fields_hold_what_the_view_says_and_no_hidden_card() -> None:
    env = SkyjoEnv(2)
    env.reset(seed=7)
    at = field_offsets(2)
    for action in ("reveal 0", "reveal 4", "reveal 1", "reveal 5", "draw"):
        env.step(action_index(next(a for a in ACTIONS if str(a) == action)))
    assert env.game is not None
    due = env.agent_selection
    other = next(a for a in env.possible_agents if a != due)
    mine, theirs = env.observe(due)["observation"], env.observe(other)["observation"]
    hand = env.game.hand
    assert hand is not None
    assert mine[at["has_hand"][0]] == 1 and mine[at["hand"][0]] == hand
    assert theirs[at["has_hand"][0]] == 0 and theirs[at["hand"][0]] == 0  # the drawn card is private
    assert mine[at["my_turn"][0]] == 1 and theirs[at["my_turn"][0]] == 0
    assert not env.observe(other)["action_mask"].any()
    # relative order: each seat sees its own grid first
    seat = env.possible_agents.index(due)
    start = at["seat0.slot0"][0]
    assert mine[start] == (1.0 if env.game.states[seat][0] == 0 else 0.0)
    # the hidden cards are nowhere: changing them leaves every observation as it was
    before = [env.observe(a)["observation"] for a in env.possible_agents]
    for s in range(2):
        for p in range(12):
            if env.game.states[s][p] == 0:
                env.game.values[s][p] = 12 - env.game.values[s][p]
    env._cache = None
    after = [env.observe(a)["observation"] for a in env.possible_agents]
    for b, a in zip(before, after):
        np.testing.assert_array_equal(b, a)
    env.game.drain_events()  # makes the encoder read the whole table again: still no hidden card
    again = [env.observe(a)["observation"] for a in env.possible_agents]
    for b, a in zip(before, again):
        np.testing.assert_array_equal(b, a)
    unseen = mine[at["unseen"][0] : at["unseen"][1]]
    assert unseen.sum() == 150 - len(env.game.discard) - 4 - 1  # 4 revealed cards, the hand


def test_an_illegal_action_raises_and_changes_nothing() -> None:
    env = SkyjoEnv(2)
    env.reset(seed=1)
    before = env.record()
    with pytest.raises(IllegalActionError, match="cannot swap 3 now"):
        env.step(action_index(ACTIONS[3]))
    with pytest.raises(IllegalActionError, match="expected an integer 0-25"):
        env.step(NUM_ACTIONS)
    # -1 is no action index, though ACTIONS[-1] ("take") exists: it must not play a take
    for bad in (-1, np.int64(-26), "3", 2.0):
        with pytest.raises(IllegalActionError, match="expected an integer 0-25"):
            env.step(bad)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="action None is only for a finished agent"):
        env.step(None)
    assert env.record() == before and env.agent_selection == "player_0"


def test_masks_are_shared_read_only_and_the_wrappers_are_fresh_copies() -> None:
    # the AEC mask is one read-only array per legal set (nothing to copy each step); writing to it
    # fails loudly instead of changing later observations, and the observation itself is fresh
    env = SkyjoEnv(2)
    env.reset(seed=3)
    first, again = env.observe("player_0"), env.observe("player_0")
    assert first["action_mask"] is again["action_mask"] and not first["action_mask"].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first["action_mask"][0] = 1
    assert first["observation"] is not again["observation"] and first["observation"].flags.writeable
    first["observation"][:] = -7
    np.testing.assert_array_equal(again["observation"], env.observe("player_0")["observation"])
    assert not env.observe("player_1")["action_mask"].flags.writeable
    gym_env = SkyjoGymEnv(opponents=["random"])
    obs, _ = gym_env.reset(seed=3)
    assert obs["action_mask"].flags.writeable  # Gymnasium: new data on every call


def test_the_fast_encoder_needs_a_game_that_records_events() -> None:
    from skyjo_ref.env.encoding import TableEncoder
    from skyjo_ref.rules.engine import Game

    with pytest.raises(ValueError, match="record_events=True"):
        TableEncoder(2, Rules()).observe(Game(2, seed=1, record_events=False), 0)


def test_bad_arguments_get_one_line_messages() -> None:
    with pytest.raises(ValueError, match="num_players must be an integer from 2 to 8, got 9"):
        SkyjoEnv(9)
    with pytest.raises(ValueError, match="reward must be one of score, relative, rank"):
        SkyjoEnv(2, reward="win")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown rules preset 'nope'"):
        SkyjoEnv(2, "nope")
    with pytest.raises(RuntimeError, match="call reset"):
        SkyjoEnv(2).view("player_0")


# ------------------------------------------------------------------ rewards and episodes


def test_rewards_score_relative_and_rank() -> None:
    totals: dict[str, list[float]] = {}
    for kind in ("score", "relative", "rank"):
        env = SkyjoEnv(3, reward=kind)  # type: ignore[arg-type]
        env.reset(seed=11)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        rng = random.Random(5)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            returns[agent] += reward
            env.step(None if terminated or truncated else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        assert env.game is not None and env.game.ranks is not None
        totals[kind] = [returns[a] for a in env.possible_agents]
        if kind == "score":
            assert totals[kind] == [-t for t in env.game.totals]
        elif kind == "relative":
            assert sum(totals[kind]) == pytest.approx(0.0)
            n = 3
            expected = [-(t - (sum(env.game.totals) - t) / (n - 1)) for t in env.game.totals]
            assert totals[kind] == pytest.approx(expected)
        else:
            assert totals[kind] == [1.0 - (r - 1) for r in env.game.ranks]


def test_max_steps_truncates() -> None:
    env = SkyjoEnv(2, max_steps=10)
    env.reset(seed=3)
    steps = 0
    rng = random.Random(0)
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            assert truncated and not terminated
            env.step(None)
        else:
            env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            steps += 1
    assert steps == 10 and env.agents == []


def test_same_seed_same_game_and_a_new_seed_sequence_after_reset() -> None:
    a, b = SkyjoEnv(2), SkyjoEnv(2)
    a.reset(seed=5)
    b.reset(seed=5)
    random_play(a, random.Random(1))
    random_play(b, random.Random(1))
    assert a.record() == b.record()
    a.reset()
    b.reset()
    assert a.game_seed == b.game_seed != 5


# ------------------------------------------------------------------ the same game as the referee


def play_bots(env: SkyjoEnv, bots: list[Bot], options: dict[str, Any]) -> dict[str, Any]:
    env.reset(options=options)
    while not env.terminations[env.agent_selection]:
        agent = env.agent_selection
        env.step(action_index(bots[env.possible_agents.index(agent)].decide(env.view(agent))))
    return env.record()


def test_a_game_through_the_env_is_the_game_the_match_runner_plays() -> None:
    spec = MatchSpec(
        seats=(SeatSpec.of_builtin("random"), SeatSpec.of_builtin("greedy")),
        games=4,
        seed="env-vs-runner",
        rotate_seats=True,
        rules=Rules.from_dict({"preset": "french"}),
    )
    records: dict[int, dict[str, Any]] = {}

    async def make(seat: SeatSpec, plan: Any, slot: int) -> InProcessSeat:
        return builtin_seat(seat, spec.seed, plan, slot)

    async def sink(index: int, record: dict[str, Any]) -> None:
        records[index] = record

    asyncio.run(run_match(spec, make, sink))
    assert len(records) == 4
    for g, record in records.items():
        plan = plan_game(g, 2, True)
        names = [spec.seats[plan.slots[s]].builtin for s in range(2)]
        bots = [make_builtin(str(names[s]), bot_seed(spec.seed, g, plan.slots[s])) for s in range(2)]
        env = SkyjoEnv(2, spec.rules, players=record["players"])
        ours = play_bots(env, bots, {"game_seed": deal_seed(spec.seed, plan.deal)})
        assert {k: v for k, v in ours.items() if k != "meta"} == {k: v for k, v in record.items() if k != "meta"}


def test_a_game_through_the_env_is_the_game_the_referee_plays_and_its_record_replays(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "skyjo_ref"]
    out = tmp_path / "referee"
    done = subprocess.run(
        [*cli, "match", "greedy", "random", "--games", "2", "--seed", "learn", "--records", str(out)],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr
    files = sorted(out.glob("*.json"))
    assert len(files) == 2
    for path in files:
        record = json.loads(path.read_text())
        meta = record["meta"]
        seats = ["greedy", "random"]
        bots = [make_builtin(seats[slot], bot_seed(meta["seed"], meta["game"], slot)) for slot in meta["slots"]]
        env = SkyjoEnv(2, players=record["players"])
        ours = play_bots(env, bots, {"game_seed": deal_seed(meta["seed"], meta["deal"])})
        assert {k: v for k, v in ours.items() if k != "meta"} == {k: v for k, v in record.items() if k != "meta"}
        mine = tmp_path / f"env-{path.name}"
        mine.write_text(json.dumps(ours))
        replay(ours)
        check = subprocess.run([*cli, "replay", "--check", str(mine)], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr


# ------------------------------------------------------------------ the Gymnasium wrapper


def test_the_wrapper_plays_sdk_bots_and_treats_an_illegal_action_as_the_referee_does() -> None:
    env = SkyjoGymEnv([str(ROOT / "examples" / "python" / "strong_bot.py")], reward="score")
    obs, info = env.reset(seed=4)
    assert info["view"].seat == 0 and obs["action_mask"].any()
    illegal = next(i for i in range(NUM_ACTIONS) if not obs["action_mask"][i])
    expected = action_index(default_action(info["view"]))
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert info["illegal"] is True and reward == -1.0
    assert env.record()["rounds"][0]["actions"][0] == {"seat": 0, **ACTIONS[expected].to_dict()}
    episode_return = reward + 1.0
    rng = random.Random(2)
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        episode_return += reward
    assert env.aec.game is not None
    assert episode_return == -env.aec.game.totals[0]
    replay(env.record())
    with pytest.raises(IllegalActionError):
        strict = SkyjoGymEnv(["greedy"], illegal="raise")
        strict.reset(seed=1)
        strict.step(0)


def test_the_wrappers_default_action_is_the_match_runners() -> None:
    env = SkyjoEnv(3)
    env.reset(seed=9)
    rng = random.Random(3)
    assert env.game is not None
    while not env.game.over:
        view = env.view(env.agent_selection)
        assert env_default_action(view) is default_action(view)
        env.step(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))


# ------------------------------------------------------------------ the trained example


def test_train_cem_is_reproducible_from_its_seed_and_the_tuned_bot_is_an_sdk_bot(tmp_path: Path) -> None:
    script = ROOT / "examples" / "learning" / "train_cem.py"
    tiny = ["--generations", "1", "--population", "3", "--deals", "1", "--check-deals", "1", "--seed", "5"]
    outputs = []
    for name in ("a.json", "b.json"):
        done = subprocess.run(
            [sys.executable, str(script), *tiny, "--out", str(tmp_path / name)],
            capture_output=True,
            text=True,
            timeout=100,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads((tmp_path / name).read_text()))
    first, second = outputs
    assert first["weights"] == second["weights"] and first["history"] == second["history"]
    assert set(first["weights"]) == set(first["defaults"])

    from skyjo_bot.loader import load_bot

    tuned = load_bot(str(ROOT / "examples" / "learning" / "tuned_bot.py"))
    saved = json.loads((ROOT / "examples" / "learning" / "tuned_weights.json").read_text())
    assert tuned.name == "tuned"
    assert dataclasses.asdict(getattr(tuned, "weights", None)) == saved["weights"]
    strong = load_bot(str(ROOT / "examples" / "python" / "strong_bot.py"))
    record = play_bots(SkyjoEnv(2, players=["tuned", "strong"]), [tuned, strong], {"game_seed": "tuned-smoke"})
    replay(record)
