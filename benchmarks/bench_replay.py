"""The replay check every stored record passes (records.replay): records replayed per CPU second, to compare checkouts
(run it with each one's Python; more is better).

    python benchmarks/bench_replay.py                  # 200 greedy games at 4 players, best of 3
"""

from __future__ import annotations

import argparse
import json
import time
import zlib

from skyjo_bot.types import Rules
from skyjo_ref.bots import make_builtin
from skyjo_ref.records import game_to_record, replay
from skyjo_ref.rules import Game


def records(games: int, players: int) -> list[dict[str, object]]:
    out = []
    for n in range(games):
        seed = f"bench-replay/{n}"
        bots = [make_builtin("greedy", zlib.crc32(f"{seed}/{i}".encode())) for i in range(players)]
        game = Game(players, Rules(), seed=seed, players=[f"p{i}" for i in range(players)])
        while not game.over:
            game.apply(bots[game.seat].decide(game.view(game.seat)))
        out.append(game_to_record(game))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    played = records(args.games, args.players)
    best = float("inf")
    for _ in range(args.repeat):
        start = time.process_time()  # CPU time: a busy machine slows the wall clock, not this
        for record in played:
            replay(record)
        best = min(best, time.process_time() - start)
    print(json.dumps({"records": len(played), "seconds": round(best, 3), "per_second": round(len(played) / best)}))


if __name__ == "__main__":
    main()
