"""An SDK bot that answers at once (a seeded random legal action): the benchmark's bot."""

import os
import random

from skyjo_bot import Action, Bot, View


class InstantBot(Bot):
    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(os.environ.get("SKYJO_TOKEN", "0"))

    def decide(self, view: View) -> Action:
        return self.rng.choice(view.legal_actions)
