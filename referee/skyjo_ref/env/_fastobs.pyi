"""Types of the optional compiled part (_fastobs.c); encoding.TableEncoder's Python code is the reference."""

from collections.abc import Set
from typing import Any, final

def configure(
    swap: object,
    draw: object,
    take: object,
    reveal: object,
    final_reveal: object,
    discard: object,
    column_cleared: object,
    turns_start: object,
    round_finishing: object,
    resync_kinds: Set[Any],
    decisions: tuple[Any, ...],
    deck: tuple[float, ...],
    /,
) -> None:
    """The EventKind members to recognise, the decisions' one-hot order, the deck (encoding.py calls it once)."""

@final
class Table:
    """The compiled catch-up state of one TableEncoder, patching its float32 buffer."""

    def __init__(self, buffer: memoryview[float], /) -> None: ...
    @property
    def held(self) -> int | None:
        """The card in hand the buffer shows (taken out of the unseen counts)."""
    @property
    def seen(self) -> int:
        """How many events of the events list are in the buffer."""
    def sync(self, game: Any, /) -> int:
        """Bring the buffer up to date with ``game.events``: 0, or 4 when ``game.events`` is not a list."""
    def set_observe(self, stages: tuple[Any, ...], masks: dict[int, Any], /) -> None:
        """Per seat a float32 array observe() fills in its order and copies (seat 0's: the buffer's), the masks."""
    def observe(self, game: Any, seat: int, encoder: Any, /) -> dict[str, Any] | None:
        """The due seat's observation dict when its mask is known, else None (in sync: Python does the rest)."""
