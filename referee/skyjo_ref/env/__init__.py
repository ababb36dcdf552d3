"""Learning environments on skyjo-ref's rules engine: PettingZoo (AEC) and Gymnasium (one learner).

Needs the ``learn`` extra (``pip install 'skyjo-ref[learn]'``: pettingzoo,
gymnasium, numpy). Imports only the rules engine, records, built-in bots and
the SDK's types — never the referee server or the match runner. See
docs/learning.md.
"""

from __future__ import annotations

try:
    import gymnasium
    import numpy  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        f"skyjo_ref.env needs the 'learn' extra ({exc.name} is missing): pip install 'skyjo-ref[learn]'"
    ) from None

from skyjo_ref.env.aec import SkyjoEnv, action_index, legal_indices, render_text
from skyjo_ref.env.encoding import ACTIONS, NUM_ACTIONS, encode_view, field_offsets, observation_size
from skyjo_ref.env.single import SkyjoGymEnv, make_bot

#: ``gymnasium.make(GYM_ID, opponents=["greedy"])`` builds a :class:`SkyjoGymEnv`.
GYM_ID = "skyjo_ref/Skyjo-v0"
if GYM_ID not in gymnasium.registry:
    gymnasium.register(GYM_ID, entry_point="skyjo_ref.env.single:SkyjoGymEnv")


def env(**kwargs: object) -> SkyjoEnv:
    """``SkyjoEnv(**kwargs)``: the PettingZoo convention (``skyjo_ref.env.env(num_players=3)``)."""
    return SkyjoEnv(**kwargs)  # type: ignore[arg-type]


#: PettingZoo's other conventional name; the environment needs no wrappers.
raw_env = env


__all__ = [
    "ACTIONS",
    "GYM_ID",
    "NUM_ACTIONS",
    "SkyjoEnv",
    "SkyjoGymEnv",
    "action_index",
    "encode_view",
    "env",
    "field_offsets",
    "legal_indices",
    "make_bot",
    "observation_size",
    "raw_env",
    "render_text",
]
