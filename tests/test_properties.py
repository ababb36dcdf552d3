"""Properties of the engine over random seeds, player counts and every preset (hypothesis).

Random legal play: always ends; the 150 cards are conserved at every step;
no view ever holds a value its seat may not see; only the acting seat has
legal actions; a game's record replays to the same game.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skyjo_bot.types import DECK_COUNTS, PRESETS, DecisionKind, EventKind, Rules, SlotState, View
from skyjo_ref import records
from skyjo_ref.rules.engine import HIDDEN, REMOVED, REVEALED, Game

#: Far above any real game (a random-play round takes a few hundred actions).
MAX_ACTIONS = 50_000

#: What a view may carry; a new field must be checked against docs/rules.md's "Hidden information" first.
VIEW_FIELDS = {
    "seat",
    "players",
    "rules",
    "round",
    "decision",
    "grids",
    "discard_pile",
    "draw_pile_size",
    "hand",
    "totals",
    "round_scores",
    "finisher",
    "starter",
    "legal_actions",
}

games = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32),
        "players": st.integers(2, 8),
        "preset": st.sampled_from(sorted(PRESETS)),
        "play": st.integers(0, 2**32),
        "end_score": st.sampled_from([100, 100, 40]),
    }
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MORE = settings(SETTINGS, max_examples=150)


def new_game(params: dict[str, int | str]) -> tuple[Game, random.Random]:
    rules = Rules.preset_named(str(params["preset"])).replace(end_score=params["end_score"])
    game = Game(int(params["players"]), rules, seed=params["seed"])
    return game, random.Random(params["play"])


def check_conservation(game: Game) -> None:
    cards: Counter[int] = Counter(game.discard)
    cards.update(game.draw_pile)
    for values, states in zip(game.values, game.states):
        cards.update(v for v, s in zip(values, states) if s != REMOVED)
    if game.hand is not None:
        cards[game.hand] += 1
    assert cards == Counter(DECK_COUNTS)


def check_view(game: Game, seat: int, view: View) -> None:
    assert {f.name for f in dataclasses.fields(View)} == VIEW_FIELDS
    assert view.seat == seat
    for owner, grid in enumerate(view.grids):
        for pos in range(12):
            state, value = game.states[owner][pos], game.values[owner][pos]
            if state == HIDDEN:
                assert grid.states[pos] is SlotState.HIDDEN and grid.values[pos] is None
            elif state == REVEALED:
                assert grid.states[pos] is SlotState.REVEALED and grid.values[pos] == value
            else:
                assert grid.states[pos] is SlotState.REMOVED and grid.values[pos] is None
    assert view.discard_pile == tuple(game.discard)  # all of it was seen
    assert view.draw_pile_size == len(game.draw_pile)
    acting = not game.over and seat == game.current_seat
    if acting:
        assert view.legal_actions == game.legal_actions() and view.legal_actions
        holding = view.decision in (DecisionKind.SWAP_OR_REVEAL, DecisionKind.SWAP_AFTER_TAKE)
        assert (view.hand is not None) == holding
        assert view.hand == game.hand
    else:
        assert view.legal_actions == ()
        assert view.hand is None


def play_checked(game: Game, rng: random.Random) -> int:
    """Random legal play to the end, checking every invariant after every action."""
    count = 0
    while not game.over:
        assert count < MAX_ACTIONS, "random play did not end"
        legal = game.legal_actions()
        assert legal
        game.apply(rng.choice(legal))
        count += 1
        check_conservation(game)
        for seat in range(game.num_players):
            check_view(game, seat, game.view(seat))
        for event in game.drain_events():
            if event.kind is EventKind.DRAW:
                assert event.value is None  # the drawn card is private to the drawer
            if event.kind is EventKind.RESHUFFLE:
                assert event.value is not None and event.pos is None  # a size, never an order
    return count


@MORE
@given(games)
def test_random_play_ends_conserves_cards_and_hides_values(params: dict[str, int | str]) -> None:
    game, rng = new_game(params)
    check_conservation(game)
    count = play_checked(game, rng)
    assert count > 0 and game.over
    assert game.current_seat is None and game.legal_actions() == ()
    assert max(game.totals) >= game.rules.end_score
    assert game.ranks is not None and game.winners is not None and 1 in game.ranks
    assert game.winners == [s for s, t in enumerate(game.totals) if t == min(game.totals)]
    if game.rules.final_tie == "extra_round":
        assert len(game.winners) == 1
    for log in game.rounds:
        assert log.scores is not None and log.raw is not None and log.finisher is not None
        # each round: 2 opening reveals per seat, then whole turns
        assert [a.seat for a in log.actions[: 2 * game.num_players]] == [
            s for s in range(game.num_players) for _ in range(2)
        ]


@SETTINGS
@given(games)
def test_record_replays_to_the_same_game(params: dict[str, int | str]) -> None:
    game, rng = new_game(params)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    record = records.game_to_record(game, meta={"seed": params["seed"]})
    replayed = records.replay(records.loads(records.dumps(record)))
    assert replayed.totals == game.totals
    assert replayed.ranks == game.ranks and replayed.winners == game.winners
    assert [(r.finisher, r.raw, r.scores) for r in replayed.rounds] == [
        (r.finisher, r.raw, r.scores) for r in game.rounds
    ]
    assert records.game_to_record(replayed, meta={"seed": params["seed"]}) == record


@SETTINGS
@given(games)
def test_same_seed_same_deals_whatever_the_play(params: dict[str, int | str]) -> None:
    first, rng = new_game(params)
    second, _ = new_game(params)
    other_rng = random.Random(int(params["play"]) + 1)
    for game, r in ((first, rng), (second, other_rng)):
        while not game.over:
            game.apply(r.choice(game.legal_actions()))
    shared = min(len(first.rounds), len(second.rounds))
    assert [r.deck for r in first.rounds[:shared]] == [r.deck for r in second.rounds[:shared]]
    # and the same seed with the same play is the same game, record for record
    again, rng_again = new_game(params)
    while not again.over:
        again.apply(rng_again.choice(again.legal_actions()))
    assert records.game_to_record(again) == records.game_to_record(first)
