"""Learning-environment speed: our PettingZoo env against rlskyjo's, the same work in the same run.

    python benchmarks/bench_env.py [--rounds 500] [--players 2 4] [--repeat 3] [--picker nonzero|flatnonzero]
                                   [--pin] [--json FILE]

Both environments are driven through their public PettingZoo API in the same
loop: the acting agent's observation is built at every step (``observe``),
a uniform random legal action is picked from its action mask with the same
picker, and ``step`` plays it. The picker is the benchmark's own code, the
same for both: the mask's indices (``mask.nonzero()[0]``, or with
``--picker flatnonzero`` the earlier ``np.flatnonzero(mask)``: the same
indices at three times the cost), then ``indices.item(rng.randrange(n))``
with a seeded ``random.Random`` — the same actions either way, so both
pickers play the same games. Its cost per step is printed: it is in both
environments' figures and brings their ratio towards 1. Ours
(``skyjo_ref.env.SkyjoEnv``) plays whole games to 100 points; rlskyjo's
``SimpleSkyjoEnv`` plays one round per episode. Episodes stop when the game is
over (the final ``None`` steps of finished agents are not counted for either).
The ``pure Python`` line is our environment with its compiled part turned
off (``SkyjoEnv(pure_python=True)``, as ``SKYJO_ENV_PURE_PYTHON=1`` or an
install without a C compiler), in the same run.
Times are CPU time of this one-thread process; the best of ``--repeat`` runs
is kept, the environments taking turns (bench_engine.py's method).

rlskyjo 1.0.0 was written for gym and PettingZoo 1.1x: the script lets it
import ``gymnasium`` as ``gym`` and gives its env the ``_dones_step_first``
helper that PettingZoo later renamed (the old helper's code), nothing else.
Its numba functions are compiled before anything is timed, and the script
checks that no compilation happened while timing. Opening reveals are steps
in ours and happen inside ``reset()`` in rlskyjo, so the table gives per-step
and per-round ratios.

rlskyjo is optional: ``pip install numba numpy && pip install --no-deps rlskyjo==1.0.0``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import Result, best_interleaved, clock, machine, pin_to_one_core
from skyjo_ref.env import SkyjoEnv
from skyjo_ref.env.encoding import ACTION_INDEX, compiled_available

Indices = Callable[[Any], Any]  # a mask -> its legal action indices (an int array)


def mask_nonzero(mask: Any) -> Any:
    """The legal indices of a 1-D mask: ``np.flatnonzero``'s result, without its ravel and dispatch."""
    return mask.nonzero()[0]


PICKERS: dict[str, Indices] = {"nonzero": mask_nonzero, "flatnonzero": np.flatnonzero}


def picker_cost(find: Indices, seed: int, count: int = 200_000) -> float:
    """Seconds of CPU the picker alone takes per step, on a mask with seven legal actions."""
    mask = np.zeros(26, dtype=np.int8)
    mask[[0, 3, 5, 7, 12, 14, 24]] = 1
    randrange = random.Random(seed).randrange
    start = clock()
    for _ in range(count):
        legal = find(mask)
        legal.item(randrange(len(legal)))
    return (clock() - start) / count


def ours(
    players: int,
    rounds: int,
    seed: int,
    observe: bool = True,
    find: Indices = mask_nonzero,
    pure_python: bool | None = None,
) -> Result:
    """Whole games through SkyjoEnv until ``rounds`` rounds are played.

    ``observe=False`` is not the benchmark's work: it picks from the engine's
    legal actions without building any observation, to show what the
    observations cost (the ``no observation`` line). ``pure_python=True``:
    the environment's pure-Python encoder, as without the compiled part
    (the ``pure Python`` line).
    """
    env = SkyjoEnv(players, pure_python=pure_python)
    randrange = random.Random(seed).randrange
    index = ACTION_INDEX
    games = played = steps = 0
    start = clock()
    env.reset(seed=seed)
    while played < rounds:
        if games:
            env.reset()
        step, terminations = env.step, env.terminations
        game = env.game
        assert game is not None
        if observe:
            while not terminations[env.agent_selection]:
                legal = find(env.observe(env.agent_selection)["action_mask"])
                step(legal.item(randrange(len(legal))))
                steps += 1
                terminations = env.terminations
        else:
            while not terminations[env.agent_selection]:
                actions = game.legal_actions()
                step(index[actions[randrange(len(actions))]])
                steps += 1
                terminations = env.terminations
        games += 1
        played += len(game.rounds)
    if not observe:
        name = "skyjo-ref env, no observation (not the same work)"
    elif env._encoder.table is None:
        name = "skyjo-ref env, pure Python" if pure_python else "skyjo-ref env (compiled part not built)"
    else:
        name = "skyjo-ref env"
    return Result(players, name, games, played, steps, clock() - start)


def load_rlskyjo() -> Any | None:
    """rlskyjo's SimpleSkyjoEnv made importable under today's gymnasium and PettingZoo, or None."""
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    try:
        import gymnasium

        sys.modules.setdefault("gym", gymnasium)  # rlskyjo imports `from gym import spaces`
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from rlskyjo.environment.skyjo_env import SimpleSkyjoEnv  # type: ignore[import-untyped]
    except ImportError:
        return None

    def _dones_step_first(self: Any) -> Any:  # PettingZoo 1.1x's helper, which rlskyjo's step calls
        dones = [agent for agent in self.agents if self.dones[agent]]
        if dones:
            self._skip_agent_selection = self.agent_selection
            self.agent_selection = dones[0]
        return self.agent_selection

    if not hasattr(SimpleSkyjoEnv, "_dones_step_first"):
        SimpleSkyjoEnv._dones_step_first = _dones_step_first
    return SimpleSkyjoEnv


def numba_compilations() -> int:
    """How many numba compilations rlskyjo's game class holds (the script shows none happens while timing)."""
    from rlskyjo.game.skyjo import SkyjoGame  # type: ignore[import-untyped]

    count = 0
    for attribute in vars(SkyjoGame).values():
        function = getattr(attribute, "__func__", attribute)  # its njit functions are static methods
        count += len(getattr(function, "signatures", ()))
    return count


def peer(players: int, rounds: int, seed: int, env_class: Any, find: Indices = mask_nonzero) -> Result:
    """rlskyjo: ``rounds`` one-round episodes through its PettingZoo env."""
    env = env_class(num_players=players)
    env.seed(seed)
    randrange = random.Random(seed).randrange
    steps = 0
    start = clock()
    for _ in range(rounds):
        env.reset()
        observe, step = env.observe, env.step
        while not env.dones[env.agent_selection]:
            legal = find(observe(env.agent_selection)["action_mask"])
            step(legal.item(randrange(len(legal))))
            steps += 1
    return Result(players, "rlskyjo 1.0.0 env", rounds, rounds, steps, clock() - start)


def table(results: list[Result]) -> str:
    lines = [
        "| players | environment | episodes | rounds | steps | steps/round | steps/s | rounds/s "
        "| ratio steps/s | ratio rounds/s |",
        "|" + "---|" * 10,
    ]
    reference = {r.players: r for r in results if r.engine.startswith("rlskyjo")}
    for r in results:
        ref = reference.get(r.players)
        ratio_s = f"{r.actions_per_s / ref.actions_per_s:.1f}" if ref else "-"
        ratio_r = f"{r.rounds_per_s / ref.rounds_per_s:.1f}" if ref else "-"
        lines.append(
            f"| {r.players} | {r.engine} | {r.games} | {r.rounds} | {r.actions} | {r.actions / r.rounds:.1f} "
            f"| {r.actions_per_s:,.0f} | {r.rounds_per_s:,.0f} | {ratio_s} | {ratio_r} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=500, help="rounds of random play per run")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="player counts (2-8)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, taking turns; the best is kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--pin", action="store_true", help="pin the process to one core")
    parser.add_argument(
        "--picker", choices=sorted(PICKERS), default="nonzero", help="how the benchmark finds the mask's legal indices"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1 or any(not 2 <= n <= 8 for n in args.players):
        parser.error("--rounds and --repeat must be >= 1 and --players between 2 and 8")

    print(f"machine: {machine()}; {pin_to_one_core() if args.pin else 'one thread, not pinned'}")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    print(f"command: python benchmarks/bench_env.py {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip())
    find = PICKERS[args.picker]
    rl = load_rlskyjo()
    compiled = 0
    if rl is None:
        print("rlskyjo is not installed (see the docstring): showing skyjo-ref's figures only")
    else:
        started = time.perf_counter()
        for n in args.players:
            peer(n, 3, args.seed, rl, find)  # compiles the numba functions before anything is timed
        compiled = numba_compilations()
        print(f"rlskyjo warm-up (numba JIT compilation): {time.perf_counter() - started:.1f} s, not timed")
    for n in args.players:
        ours(n, 20, args.seed, find=find)
    status = "built and used" if compiled_available() else "NOT built: every skyjo-ref line is pure Python"
    print(f"skyjo-ref's compiled observation part (skyjo_ref.env._fastobs): {status}")
    print(
        f"picker ({args.picker}): {picker_cost(find, args.seed) * 1e6:.2f} µs a step of CPU, "
        "the same in both environments' figures"
    )

    results: list[Result] = []
    for n in args.players:
        runs: list[Callable[[], Result]] = [
            lambda n=n: ours(n, args.rounds, args.seed, find=find),  # type: ignore[misc]
            lambda n=n: ours(n, args.rounds, args.seed, find=find, pure_python=True),  # type: ignore[misc]
            lambda n=n: ours(n, args.rounds, args.seed, observe=False),  # type: ignore[misc]
        ]
        if rl is not None:
            runs.append(lambda n=n: peer(n, args.rounds, args.seed, rl, find))  # type: ignore[misc]
        results += best_interleaved(args.repeat, runs)
    if rl is not None:
        late = numba_compilations() - compiled
        print(f"rlskyjo: {late} numba compilation(s) while timing" + (" (its figures include them)" if late else ""))
    print()
    print(table(results))
    if args.json:
        rows = [{**asdict(r), "steps_per_s": r.actions_per_s, "rounds_per_s": r.rounds_per_s} for r in results]
        args.json.write_text(json.dumps({"machine": machine(), "results": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
