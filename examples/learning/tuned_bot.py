"""The strong example bot with the weights examples/learning/train_cem.py tuned by self-play.

Only the weights differ: the code is examples/python/strong_bot.py's, imported
from there. A bot file like any other, through the SDK:

    skyjo-ref match examples/learning/tuned_bot.py examples/python/strong_bot.py --games 400 --seed gate-1
    SKYJO_ADDR=... SKYJO_TOKEN=... python examples/learning/tuned_bot.py

The weights come from tuned_weights.json beside this file (written by
train_cem.py; see docs/learning.md for how it was made and what it is worth).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from strong_bot import StrongBot, Weights

WEIGHTS_FILE = Path(__file__).resolve().parent / "tuned_weights.json"


def tuned_weights(path: Path = WEIGHTS_FILE) -> Weights:
    """The ``weights`` object of a train_cem.py result file."""
    return Weights(**json.loads(path.read_text(encoding="utf-8"))["weights"])


class TunedBot(StrongBot):
    """StrongBot with the tuned weights."""

    name = "tuned"

    def __init__(self) -> None:
        super().__init__(tuned_weights())


if __name__ == "__main__":
    # Run as a program: play on the referee named by SKYJO_ADDR with SKYJO_TOKEN.
    from skyjo_bot.client import run

    run(TunedBot())
