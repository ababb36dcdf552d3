"""``random``: uniform over the legal actions."""

from __future__ import annotations

import random

from skyjo_bot import Action, Bot, View


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed: int | str | None = None) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def decide(self, view: View) -> Action:
        return self.rng.choice(view.legal_actions)
