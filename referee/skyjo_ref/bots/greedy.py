"""``greedy``: a simple, sensible heuristic that looks one card ahead.

It values a hidden card at the average of the cards it has not seen, keeps a
card when placing it lowers its grid by enough (or builds a column), and
otherwise draws or reveals. Deterministic: same view, same action.
"""

from __future__ import annotations

from skyjo_bot import Action, Bot, DecisionKind, View, column_positions

#: Opening reveals: the top and middle of the first column, to start a column.
OPENING = (0, 4, 1, 5, 2, 6, 3, 7, 8, 9, 10, 11)
#: Keep a card when it lowers the grid by at least this much.
KEEP_GAIN = 2.0


def placement_gain(view: View, card: int, pos: int, hidden_value: float) -> float:
    """How much placing ``card`` at ``pos`` lowers the grid, counting column clears."""
    grid = view.my_grid
    value = grid.values[pos]
    current = hidden_value if value is None else value
    gain = current - card
    if view.rules.column_clear:
        column = [p for p in column_positions(pos % 4) if p != pos]
        others = [grid.values[p] for p in column]
        if all(v == card for v in others):
            gain += 2 * card  # the whole column goes: its two other cards count too
        elif any(v == card for v in others) and card > 0:
            gain += 0.5 * card  # half-way to a column
    return gain


def best_placement(view: View, card: int) -> tuple[float, int]:
    hidden_value = view.expected_hidden_value()
    return max((placement_gain(view, card, pos, hidden_value), -pos) for pos in view.my_grid.open_positions())


class GreedyBot(Bot):
    name = "greedy"

    def decide(self, view: View) -> Action:
        legal = view.legal_actions
        decision = view.decision
        if decision is DecisionKind.OPENING_REVEAL:
            still_hidden = set(view.my_grid.hidden_positions())
            return Action.reveal(next(p for p in OPENING if p in still_hidden))
        if decision is DecisionKind.DRAW_OR_TAKE:
            top = view.discard_top
            if top is not None and best_placement(view, top)[0] >= KEEP_GAIN:
                return Action.take()
            return Action.draw()
        assert view.hand is not None
        gain, neg_pos = best_placement(view, view.hand)
        if decision is DecisionKind.SWAP_AFTER_TAKE or gain >= KEEP_GAIN:
            return Action.swap(-neg_pos)
        hidden = view.my_grid.hidden_positions()
        if hidden:
            return Action.reveal(hidden[0])
        choice = Action.swap(-neg_pos)
        return choice if choice in legal else legal[0]
