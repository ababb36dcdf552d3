"""A strong Skyjo bot: expected values, column building and round-end timing.

It uses only the SDK (``skyjo_bot``) and the view it is given, so it plays the
same in-process or remote:

    skyjo-ref match examples/python/strong_bot.py greedy --games 200
    skyjo-ref play examples/python/strong_bot.py              # you against it
    SKYJO_ADDR=... SKYJO_TOKEN=... python -m skyjo_bot run examples/python/strong_bot.py

Ideas (docs/strong-bot.md has the measurements):

* **Expected value of a hidden card** is the mean of the cards this seat has
  not seen (``view.unseen_cards()``), not a fixed 5.
* **Every option is scored as a change of my expected round score**, column by
  column: revealed cards, hidden cards at their expected value, the chance
  that a hidden card completes a pair to a cleared column, and the chance to
  complete a pair later (worth more while many turns remain).
* **Draw or take** compares the best use of the discard with the expected
  best use of an unknown drawn card (averaged over the unseen cards).
* **Tempo**: revealing (or filling a hidden slot) brings the round's end
  closer; that is good when I am ahead and bad when I am behind.
* **Finishing**: revealing my last hidden card is scored with the chance that
  I end strictly lowest (opponents' hidden cards as a normal distribution)
  and the finisher penalty of the rules in force; when that chance is poor the
  bot parks the card on a revealed slot instead.
* **Last turn** (someone else finished): only the final score counts.
* **Opponents**: a card I would discard is charged with what it is worth to
  the next player (a card that completes their column is expensive).
* **End of game**: in a round after which the game may end, the lead that
  sets the tempo is the lead in game totals, not in this round.
* **Patience**: at a table of careful players everybody may wait for a safe
  finish that never comes; after 25 turns in one round the fear of the
  penalty fades, so every round ends.

Deterministic: the same game so far always gives the same action.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from skyjo_bot import Action, Bot, DecisionKind, SlotState, View

Cell = int | None  # a revealed value, or None for a hidden slot

# Tuned by duplicate games against greedy (examples/python/duel.py).
PAIR_POTENTIAL = 0.9  # weight of completing a pair later
DRAW_RATE = 1.5  # chances per own turn to meet a given card (draw + discard)
TEMPO = 0.05  # per hidden slot closed, per point of expected lead
TEMPO_CAP = 12.0  # the lead counts up to this many points
FEED_WEIGHT = 0.8  # how much a discard that helps the next player costs
FEED_BASELINE = 3.0  # what the next player gains anyway in a turn
OPP_LAST_TURN_GAIN = 2.5  # what an opponent gains on their last turn, on average
FINISH_BONUS = 1.0  # ending the round cuts the opponents' remaining improvement
TAKE_MARGIN = 0.0
PATIENCE_TURNS = 25  # a round this long (my turns) is dragging on: a typical one takes 8-15
PATIENCE_FADE = 15  # turns over which the fear of the finisher penalty fades to nothing
GAME_END_AWARE = True  # in a round that may end the game, tempo follows the lead in totals


@dataclass(frozen=True, slots=True)
class Weights:
    """The bot's tunable weights (defaults: the constants above); examples/learning tunes them."""

    pair_potential: float = PAIR_POTENTIAL
    draw_rate: float = DRAW_RATE
    tempo: float = TEMPO
    tempo_cap: float = TEMPO_CAP
    feed_weight: float = FEED_WEIGHT
    feed_baseline: float = FEED_BASELINE
    opp_last_turn_gain: float = OPP_LAST_TURN_GAIN
    finish_bonus: float = FINISH_BONUS
    take_margin: float = TAKE_MARGIN


_SWAPS = tuple(Action.swap(pos) for pos in range(12))
_REVEALS = tuple(Action.reveal(pos) for pos in range(12))


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@dataclass(slots=True)
class _Context:
    """What one decision needs, computed once from the view."""

    view: View
    probs: dict[int, float]  # value -> chance that an unseen card has it
    mean: float  # expected value of a hidden card
    variance: float
    turns_left: float  # my expected remaining turns this round (0 on my last turn)
    column_clear: bool
    final_clear: bool
    lead: float  # expected lead over the best opponent (positive: I am lower)
    my_hidden: int
    w: Weights = field(default_factory=Weights)
    patience: float = 1.0  # 1: fear the finisher penalty fully; falls to 0 when a round drags on


def _context(view: View, weights: Weights) -> _Context:
    unseen = view.unseen_cards()
    total = sum(n for n in unseen.values() if n > 0)
    if total == 0:
        probs = {5: 1.0}
    else:
        probs = {v: n / total for v, n in unseen.items() if n > 0}
    mean = sum(v * p for v, p in probs.items())
    variance = sum(p * (v - mean) ** 2 for v, p in probs.items())
    hidden_counts = [len(g.hidden_positions()) for g in view.grids]
    my_hidden = hidden_counts[view.seat]
    if view.finisher is not None:
        turns = 0.0
    else:
        turns = min(hidden_counts) * 1.3
    rules = view.rules
    expected = [g.revealed_sum() + len(g.hidden_positions()) * mean for g in view.grids]
    if GAME_END_AWARE and max(t + e for t, e in zip(view.totals, expected)) >= rules.end_score:
        # the game may end with this round: what counts is the lead in game totals
        expected = [t + e for t, e in zip(view.totals, expected)]
    mine = expected[view.seat]
    best_other = min(e for s, e in enumerate(expected) if s != view.seat)
    return _Context(
        view=view,
        probs=probs,
        mean=mean,
        variance=variance,
        turns_left=turns,
        column_clear=rules.column_clear,
        final_clear=rules.column_clear and rules.clear_on_final_reveal,
        lead=best_other - mine,
        my_hidden=my_hidden,
        w=weights,
    )


class StrongBot(Bot):
    """Scores every legal action as a change of expected round score, and picks the best."""

    name = "strong"

    def __init__(self, weights: Weights | None = None) -> None:
        super().__init__()
        self.weights = weights if weights is not None else Weights()
        self._round_key: tuple[object, ...] = ()
        self._turns = 0  # my turns in the round in play

    def decide(self, view: View) -> Action:
        legal = view.legal_actions
        if view.decision is DecisionKind.OPENING_REVEAL:
            return self._opening(view)
        key = (view.players, view.round, view.totals)
        if key != self._round_key:
            self._round_key, self._turns = key, 0
        if view.decision is DecisionKind.DRAW_OR_TAKE:
            self._turns += 1
        ctx = _context(view, self.weights)
        # When every player waits for a safe finish (low grids, high cards left), nobody
        # ever ends the round: after PATIENCE_TURNS turns the penalty counts less and less.
        ctx.patience = min(1.0, max(0.0, 1.0 - (self._turns - PATIENCE_TURNS) / PATIENCE_FADE))
        planner = _Planner(ctx)
        if view.decision is DecisionKind.DRAW_OR_TAKE:
            top = view.discard_top
            take = planner.best_with_card(top)[0] if top is not None else -math.inf
            draw = planner.draw_value()
            choice = Action.take() if take > draw + self.weights.take_margin else Action.draw()
            return choice if choice in legal else legal[0]
        assert view.hand is not None
        options = planner.options_with_card(view.hand, allow_reveal=view.decision is DecisionKind.SWAP_OR_REVEAL)
        best = max(options, key=lambda item: (item[0], -item[1].pos if item[1].pos is not None else 0))[1]
        return best if best in legal else legal[0]

    @staticmethod
    def _opening(view: View) -> Action:
        """Open two cards of one column: a pair there is a head start on a clear."""
        hidden = set(view.my_grid.hidden_positions())
        for pos in (0, 4, 1, 5, 2, 6, 3, 7, 8, 9, 10, 11):
            if pos in hidden:
                return Action.reveal(pos)
        return view.legal_actions[0]


class _Planner:
    """Evaluates my grid column by column, and the options for a card in hand."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        view = ctx.view
        grid = view.my_grid
        self.cells: list[Cell] = list(grid.values)
        self.removed = [s is SlotState.REMOVED for s in grid.states]
        self._col_cache: dict[tuple[Cell, Cell, Cell], float] = {}
        self._feed_cache: dict[int, float] = {}
        self._reveal_cache: dict[int, tuple[float, float]] = {}
        self._hidden_feed_cost: float | None = None
        self.current = sum(self._column(c, self.cells) for c in range(4) if not self.removed[c])
        self.next_seat = (view.seat + 1) % view.num_players
        # my discard reaches the next player only if they still have a turn
        self.next_plays = view.finisher is None or self.next_seat != view.finisher

    # ---------------------------------------------------------------- columns

    def _get_chance(self, value: int) -> float:
        """Chance of meeting ``value`` again in my remaining turns."""
        turns = self.ctx.turns_left
        if turns <= 0:
            return 0.0
        p = self.ctx.probs.get(value, 0.0)
        return 1.0 - math.pow(1.0 - p, self.ctx.w.draw_rate * turns)

    def _column(self, column: int, cells: Sequence[Cell]) -> float:
        key = (cells[column], cells[column + 4], cells[column + 8])
        found = self._col_cache.get(key)
        if found is None:
            found = self._col_cache[key] = self._column_value(key)
        return found

    def _column_value(self, key: tuple[Cell, Cell, Cell]) -> float:
        """Expected final contribution of one column (lower is better)."""
        ctx = self.ctx
        revealed = [c for c in key if c is not None]
        hidden = 3 - len(revealed)
        value = sum(revealed) + hidden * ctx.mean
        if not ctx.column_clear or hidden >= 2:
            return value
        if hidden == 0:
            a, b, c = revealed
            if a == b == c:
                return 0.0
            pair, odd = _pair(a, b, c)
            if pair is not None and pair > 0:
                value -= ctx.w.pair_potential * self._get_chance(pair) * (2 * pair + odd)
            return value
        a, b = revealed
        if a == b:
            p = ctx.probs.get(a, 0.0)
            if ctx.turns_left > 0 or ctx.final_clear:
                value -= p * 3 * a  # the hidden card may be the third
            if a > 0:
                value -= ctx.w.pair_potential * self._get_chance(a) * (2 * a + ctx.mean)
        return value

    def _total(self, cells: Sequence[Cell], column: int) -> float:
        """My grid's value with ``column`` changed to ``cells``."""
        before = self._column(column, self.cells)
        after = self._after_clear(column, cells)
        return self.current - before + after

    def _after_clear(self, column: int, cells: Sequence[Cell]) -> float:
        a, b, c = cells[column], cells[column + 4], cells[column + 8]
        if self.ctx.column_clear and a is not None and a == b == c:
            return 0.0
        return self._column(column, cells)

    # ------------------------------------------------------------ opponents

    def _feed(self, card: int) -> float:
        """What giving ``card`` to the next player costs me."""
        if not self.next_plays:
            return 0.0
        found = self._feed_cache.get(card)
        if found is None:
            found = self._feed_cache[card] = self._feed_value(card)
        return found

    def _feed_value(self, card: int) -> float:
        view = self.ctx.view
        grid = view.grids[self.next_seat]
        mean = self.ctx.mean
        best = 0.0
        for pos in grid.open_positions():
            current = grid.values[pos]
            gain = (mean if current is None else current) - card
            if self.ctx.column_clear:
                col = pos % 4
                others = [grid.values[p] for p in (col, col + 4, col + 8) if p != pos]
                if others[0] is not None and others[0] == others[1] == card:
                    gain += 2 * card
            best = max(best, gain)
        w = self.ctx.w
        weight = w.feed_weight if view.num_players == 2 else w.feed_weight / 2
        return weight * max(0.0, best - w.feed_baseline)

    # -------------------------------------------------------------- options

    def _finish_value(self, cells: Sequence[Cell]) -> float:
        """Expected final score of mine if this grid ends the round now (all revealed)."""
        ctx = self.ctx
        view = ctx.view
        mine = 0
        for column in range(4):
            if self.removed[column]:
                continue
            a, b, c = cells[column], cells[column + 4], cells[column + 8]
            assert a is not None and b is not None and c is not None
            if not (ctx.column_clear and a == b == c):
                mine += a + b + c
        p_lowest = 1.0
        for seat, grid in enumerate(view.grids):
            if seat == view.seat:
                continue
            hidden = len(grid.hidden_positions())
            mu = grid.revealed_sum() + hidden * ctx.mean - ctx.w.opp_last_turn_gain
            sd = math.sqrt(hidden * ctx.variance + 6.0)
            p_lowest *= 1.0 - _normal_cdf((mine + 0.5 - mu) / sd)
        penalty = _penalty(view, mine) * ctx.patience
        bonus = ctx.w.finish_bonus if ctx.patience > 0 else ctx.w.finish_bonus + 50.0  # end it now
        return mine + (1.0 - p_lowest) * penalty - bonus

    def _score(self, cells: list[Cell], column: int, closes: int, discard: float) -> float:
        """Gain of an option: lower expected score, tempo, minus what it feeds the next player."""
        ctx = self.ctx
        if ctx.view.finisher is None and ctx.my_hidden - closes == 0:
            after = self._finish_value(cells)
        else:
            after = self._total(cells, column)
        gain = self.current - after - discard
        if closes and ctx.view.finisher is None:
            cap = ctx.w.tempo_cap
            lead = max(-cap, min(cap, ctx.lead))
            if lead < 0:
                lead *= ctx.patience  # a trailer stalls, but not for ever
            gain += ctx.w.tempo * lead * closes
        return gain

    def options_with_card(self, card: int, allow_reveal: bool) -> list[tuple[float, Action]]:
        """(gain, action) for every swap of ``card`` and, after a draw, every reveal."""
        out: list[tuple[float, Action]] = []
        for pos in range(12):
            if self.removed[pos]:
                continue
            old = self.cells[pos]
            cells = list(self.cells)
            cells[pos] = card
            column = pos % 4
            cleared = self._clears(cells, column)
            if cleared:
                discard = self._feed(card)
            elif old is None:
                discard = self._hidden_feed()
            else:
                discard = self._feed(old)
            out.append((self._score(cells, column, 1 if old is None else 0, discard), _SWAPS[pos]))
        if allow_reveal:
            for pos in range(12):
                if self.removed[pos] or self.cells[pos] is not None:
                    continue
                out.append((self._reveal_gain(pos, card), _REVEALS[pos]))
        return out

    def _hidden_feed(self) -> float:
        """Expected cost of discarding one of my hidden cards (its value is unknown until then)."""
        if self._hidden_feed_cost is None:
            self._hidden_feed_cost = sum(p * self._feed(v) for v, p in self.ctx.probs.items())
        return self._hidden_feed_cost

    def _reveal_gain(self, pos: int, card: int) -> float:
        """Expected gain of discarding ``card`` and revealing ``pos`` (averaged over the hidden value)."""
        found = self._reveal_cache.get(pos)
        if found is None:
            # the part that does not depend on the card in hand is computed once per position
            base = 0.0  # expected gain before feeding the next player
            fed = 0.0  # expected feeding cost when the column clears (its value goes on top)
            keeps = 0.0  # chance the column stays (then the drawn card is on top)
            column = pos % 4
            for v, p in self.ctx.probs.items():
                cells = list(self.cells)
                cells[pos] = v
                base += p * self._score(cells, column, 1, 0.0)
                if self._clears(cells, column):
                    fed += p * self._feed(v)
                else:
                    keeps += p
            found = self._reveal_cache[pos] = (base - fed, keeps)
        base, keeps = found
        return base - keeps * self._feed(card)

    def _clears(self, cells: Sequence[Cell], column: int) -> bool:
        a, b, c = cells[column], cells[column + 4], cells[column + 8]
        return self.ctx.column_clear and a is not None and a == b == c

    def best_with_card(self, card: int) -> tuple[float, Action]:
        return max(self.options_with_card(card, allow_reveal=False), key=lambda item: item[0])

    def draw_value(self) -> float:
        """Expected gain of drawing: the best use of each possible card, averaged."""
        total = 0.0
        for v, p in self.ctx.probs.items():
            total += p * max(gain for gain, _ in self.options_with_card(v, allow_reveal=True))
        return total


def _pair(a: int, b: int, c: int) -> tuple[int | None, int]:
    """The value that appears twice among three, and the odd one out."""
    if a == b:
        return a, c
    if a == c:
        return a, b
    if b == c:
        return b, a
    return None, 0


def _penalty(view: View, score: int) -> float:
    """What the finisher penalty adds to ``score`` if the finisher is not strictly lowest."""
    kind = view.rules.finisher_penalty.value
    if kind == "double_if_positive":
        return float(max(score, 0))
    if kind == "double":
        return float(score)
    return 10.0


if __name__ == "__main__":
    # Run as a program: play on the referee named by SKYJO_ADDR with SKYJO_TOKEN.
    from skyjo_bot.client import run

    run(StrongBot())
