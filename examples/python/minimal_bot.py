"""The shortest complete Skyjo bot: copy this file and change ``decide``.

Play it against the built-in greedy bot (the referee starts it for you):

    skyjo-ref match examples/python/minimal_bot.py greedy --games 20

or connect it to a running referee (``skyjo-ref serve`` prints the address
and issues tokens):

    SKYJO_ADDR=127.0.0.1:50051 SKYJO_TOKEN=... python -m skyjo_bot run examples/python/minimal_bot.py
"""

from skyjo_bot import Action, Bot, DecisionKind, View


class MinimalBot(Bot):
    """Keep low cards: take a low discard, put every card where it lowers the score most."""

    def decide(self, view: View) -> Action:
        # view holds everything this seat may see; view.legal_actions lists what may be played.
        grid = view.my_grid  # your 12 slots: grid.values[pos] is None while a card is hidden
        hidden = grid.hidden_positions()

        # Opening: reveal any two of your hidden cards.
        if view.decision is DecisionKind.OPENING_REVEAL:
            return Action.reveal(hidden[0])

        # Start of a turn: take the top discard when it is low, otherwise draw.
        if view.decision is DecisionKind.DRAW_OR_TAKE:
            top = view.discard_top
            return Action.take() if top is not None and top <= 3 else Action.draw()

        # You hold a card (view.hand): put it where it saves the most points.
        card = view.hand
        assert card is not None
        revealed = grid.revealed_positions()
        worst = max(revealed, key=lambda pos: grid.values[pos] or 0, default=None)
        if worst is not None and (grid.values[worst] or 0) > card:
            return Action.swap(worst)  # replace your highest revealed card
        if hidden and card <= 4:
            return Action.swap(hidden[0])  # a low card beats an unknown one (about 5 on average)
        if hidden and view.decision is DecisionKind.SWAP_OR_REVEAL:
            return Action.reveal(hidden[0])  # discard the drawn card and turn a hidden one
        # A card you took must be placed somewhere.
        return Action.swap(hidden[0] if hidden else revealed[0])
