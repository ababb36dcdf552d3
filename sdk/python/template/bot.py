"""__BOT_NAME__: a Skyjo bot on the skyjo_bot SDK (made by `skyjo-ref new-bot`).

It plays the reference strategy (examples/python/minimal_bot.py: every SDK's template plays the same moves on
the same deals). Replace the body of ``decide`` with your own: ``view`` holds everything your seat may see,
``view.legal_actions`` what you may play. See README.md for building, running, checking and playing it.
"""

from skyjo_bot import Action, Bot, DecisionKind, View


class __BOT_CLASS__(Bot):
    """Keep low cards: take a low discard, put every card where it lowers the score most."""

    name = "__BOT_NAME__"  # sent in Hello
    version = "0.1.0"  # sent in Hello; kept in every game record

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
