"""Rules conformance: one explicit scenario per rule and option of docs/rules.md.

Every game here is dealt from an exact deck (tests/deals.py), so each
expected card, score and seat is worked out by hand, not by the engine.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from deals import G_HIGH, G_LOW, G_MID, act, hidden, make_deck, make_game, open_all, play_round, turn_reveal
from skyjo_bot.types import (
    DECK_SIZE,
    Action,
    DecisionKind,
    EventKind,
    IllegalActionError,
    Rules,
    RulesError,
    SlotState,
    full_deck,
)
from skyjo_ref.rules.engine import DealError, FixedDealer, Game, SeededDealer, competition_ranks, shuffle

# ------------------------------------------------------------------ dealing


def test_dealing_layout_discard_and_draw_order() -> None:
    grids = [list(range(12)), [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1], [-2, -1, 0] * 4]
    deck = make_deck(grids, discard=7, draw=[-2, 12, 5])
    game = make_game([deck], 3)
    assert game.view(0).discard_pile == (7,)  # deck[12n] starts the discard pile
    assert game.view(1).draw_pile_size == DECK_SIZE - 37
    # reveal every slot of every seat through play: first the openings, then draw-and-reveal
    open_all(game, (0, 11))
    for seat in range(3):
        grid = game.view(seat).grids[seat]
        assert grid.values[0] == deck[12 * seat + 0] and grid.values[11] == deck[12 * seat + 11]
    starter = game.current_seat
    assert starter is not None
    act(game, "draw")
    assert game.view(starter).hand == -2  # deck[12n + 1] is drawn first
    act(game, "reveal 5")
    assert game.view(starter).grids[starter].values[5] == deck[12 * starter + 5]
    assert game.view(0).discard_pile == (7, -2)
    act(game, "draw")
    assert game.view(game.seat).hand == 12  # then deck[12n + 2]
    act(game, "swap 1")
    assert game.view(0).discard_pile[-1] == deck[12 * ((starter + 1) % 3) + 1]


def test_deck_must_be_the_150_card_multiset() -> None:
    short = full_deck()[:-1]
    with pytest.raises(DealError, match="149 cards, expected 150"):
        Game(2, dealer=FixedDealer([short]))
    wrong = full_deck()
    wrong[0] = 13
    with pytest.raises(DealError, match="value -2"):
        Game(2, dealer=FixedDealer([wrong]))


def test_fast_shuffle_is_random_shuffle() -> None:
    """The engine's deal shuffle gives the permutation random.Random.shuffle gives, and leaves the same state."""
    for seed in [*range(300), "skyjo/7/round/2", 2**64 + 3]:
        ours, theirs = full_deck(), full_deck()
        a, b = random.Random(seed), random.Random(seed)
        shuffle(ours, a)
        b.shuffle(theirs)
        assert ours == theirs and a.random() == b.random(), seed
    short = [1, 2, 3, 4, 5]
    shuffle(short, random.Random(1))  # other sizes fall back to Random.shuffle
    assert sorted(short) == [1, 2, 3, 4, 5]


def test_seeded_deal_is_the_documented_shuffle() -> None:
    """A seed's deal: the sorted deck shuffled by random.Random("skyjo/{seed}/round/{k}") (pinned across versions)."""
    for seed, k in ((1, 0), ("tournament-3", 5)):
        expected = full_deck()
        random.Random(f"skyjo/{seed}/round/{k}").shuffle(expected)
        assert SeededDealer(seed).deck(k) == expected


def test_seeded_dealer_is_deterministic_and_round_decks_independent() -> None:
    a, b = SeededDealer(42), SeededDealer(42)
    assert a.deck(0) == b.deck(0) and a.deck(3) == b.deck(3)
    assert a.deck(0) != a.deck(1)
    assert sorted(a.deck(2)) == full_deck()
    assert SeededDealer(43).deck(0) != a.deck(0)


# -------------------------------------------------------------- opening reveals


def test_opening_reveals_seat_by_seat_two_each() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW, G_MID], 5)], 3)
    assert game.decision is DecisionKind.OPENING_REVEAL
    assert game.legal_actions() == tuple(Action.reveal(p) for p in range(12))
    assert game.view(1).legal_actions == ()  # not acting: nothing legal
    order = []
    for pos in (3, 7, 0, 11, 5, 6):
        order.append(game.current_seat)
        if game.current_seat == 0 and pos == 7:
            assert Action.reveal(3) not in game.legal_actions()
        act(game, f"reveal {pos}")
    assert order == [0, 0, 1, 1, 2, 2]
    assert game.view(0).decision is DecisionKind.DRAW_OR_TAKE
    assert game.view(0).my_grid.revealed_positions() == (3, 7)


def test_opening_reveal_cannot_reveal_twice_or_draw() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW], 5)], 2)
    act(game, "reveal 4")
    with pytest.raises(IllegalActionError, match=r"seat 0 cannot reveal 4 now .*already revealed"):
        act(game, "reveal 4")
    with pytest.raises(IllegalActionError, match=r"seat 0 cannot draw now \(opening_reveal is due"):
        act(game, "draw")
    with pytest.raises(IllegalActionError, match=r"seat 0 cannot swap 4 now .*expected reveal POS of a hidden slot"):
        act(game, "swap 4")


# ----------------------------------------------------------------- starters


@pytest.mark.parametrize(
    ("openings", "starter"),
    [
        ([(1, 2), (5, 5), (3, 3)], 1),  # 3, 10, 6: highest
        ([(4, 5), (5, 4), (2, 2)], 0),  # tie 9, 9: lowest seat
        ([(0, 0), (6, 6), (12, 0)], 1),  # tie 12, 12 between seats 1 and 2
        ([(-2, -1), (-1, -1), (-2, -2)], 1),  # all negative: -2 is the highest
    ],
)
def test_first_round_starter_highest_opening_sum_lowest_seat_on_tie(
    openings: list[tuple[int, int]], starter: int
) -> None:
    grids = []
    for a, b in openings:
        grid = [a, b, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        grids.append(grid)
    game = make_game([make_deck(grids, 5)], len(grids))
    open_all(game)
    assert game.current_seat == starter
    assert game.starter == starter
    assert game.view(2).starter == starter


def _two_round_game(rule: str, round1_grids: list[list[int]] | None = None) -> Game:
    """Round 0: seat 0 starts and finishes (54, penalised), seat 1 lowest (7), seat 2 53.

    Round 1: seat 2 has the highest opening sum.
    """
    round0 = make_deck([G_HIGH, G_LOW, G_MID], 5)
    round1 = make_deck(round1_grids or [G_LOW, G_MID, G_HIGH], 5)
    game = make_game([round0, round1], 3, Rules(next_round_starter=rule, end_score=1000))  # type: ignore[arg-type]
    open_all(game)
    assert game.current_seat == 0
    log = play_round(game)
    assert log.finisher == 0 and log.scores == [108, 7, 53]
    open_all(game)
    return game


@pytest.mark.parametrize(("rule", "starter"), [("finisher", 0), ("round_winner", 1), ("highest_reveal", 2)])
def test_next_round_starter(rule: str, starter: int) -> None:
    game = _two_round_game(rule)
    assert game.round_index == 1
    assert game.current_seat == starter


def test_round_winner_is_lowest_score_after_penalty_tie_to_lowest_seat() -> None:
    # seat 0 finishes with 7 and seat 1 has 7 too: the finisher is not strictly lowest, so 7 -> 14.
    # Before the penalty the tie would go to seat 0 (lower index); after it, seat 1 won the round.
    seat0 = [5, 5, -2, -2, -1, -1, 0, 0, 0, 0, 1, 2]
    rules = Rules(next_round_starter="round_winner", end_score=1000)  # type: ignore[arg-type]
    game = make_game([make_deck([seat0, G_LOW], 5), make_deck([G_HIGH, G_LOW], 5)], 2, rules)
    open_all(game)
    log = play_round(game)
    assert log.finisher == 0 and log.raw == [7, 7] and log.scores == [14, 7]
    open_all(game)
    assert game.current_seat == 1  # although seat 0 opened higher (23 > 3)
    # tie for the lowest round score: the lowest seat starts
    round0 = make_deck([G_HIGH, G_LOW, G_LOW], 5)
    game = make_game([round0], 3, rules)
    open_all(game)
    log = play_round(game)
    assert log.scores == [108, 7, 7]
    open_all(game)
    assert game.current_seat == 1


# --------------------------------------------------------------------- turns


def test_take_must_swap() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW], discard=9)], 2)
    open_all(game)
    act(game, "take")
    assert game.decision is DecisionKind.SWAP_AFTER_TAKE
    assert game.legal_actions() == tuple(Action.swap(p) for p in range(12))
    assert game.view(0).hand == 9 and game.view(1).hand is None
    assert game.view(0).discard_pile == ()
    with pytest.raises(IllegalActionError, match=r"seat 0 cannot reveal 5 now .*a taken card must be swapped"):
        act(game, "reveal 5")
    with pytest.raises(IllegalActionError, match=r"cannot reveal 0 now .*a taken card must be swapped"):
        act(game, "reveal 0")  # revealed already, but the reason is that a taken card must be swapped
    act(game, "swap 5")  # hidden: it is now revealed with the taken card
    grid = game.view(1).grids[0]
    assert grid.states[5] is SlotState.REVEALED and grid.values[5] == 9
    assert game.view(1).discard_pile == (G_HIGH[5],)
    assert game.current_seat == 1


def test_draw_then_swap_or_discard_and_reveal() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW], discard=9, draw=[-2, 8])], 2)
    open_all(game)
    act(game, "draw")
    assert game.decision is DecisionKind.SWAP_OR_REVEAL
    assert game.view(0).hand == -2 and game.view(1).hand is None
    legal = set(game.legal_actions())
    assert legal == {Action.swap(p) for p in range(12)} | {Action.reveal(p) for p in range(2, 12)}
    act(game, "swap 0")  # a revealed slot: the 12 goes on the discard pile
    assert game.view(0).discard_pile == (9, 12)
    assert game.view(0).grids[0].values[0] == -2
    act(game, "draw", "reveal 7")  # seat 1 discards the 8 and reveals its slot 7
    assert game.view(0).discard_pile == (9, 12, 8)
    assert game.view(0).grids[1].values[7] == G_LOW[7]
    with pytest.raises(
        IllegalActionError, match=r"seat 0 cannot swap 3 now \(draw_or_take is due: expected draw or take"
    ):
        act(game, "swap 3")


def test_removed_slot_can_be_neither_swapped_nor_revealed() -> None:
    seat0 = [7, 1, 2, 3, 7, 4, 5, 6, 8, 9, 10, 11]  # column 0: 7, 7, (8)
    game = make_game([make_deck([seat0, G_LOW], discard=7, draw=[5])], 2)
    act(game, "reveal 0", "reveal 4", "reveal 0", "reveal 1")
    assert game.current_seat == 0  # 14 > 3
    act(game, "take", "swap 8")  # 7 7 7: column 0 goes
    assert game.view(1).grids[0].states[0::4] == (SlotState.REMOVED,) * 3
    act(game, "draw", "reveal 2")  # seat 1
    act(game, "draw")
    assert Action.swap(0) not in game.legal_actions() and Action.reveal(8) not in game.legal_actions()
    for text, why in (("swap 4", "removed column"), ("reveal 8", "removed column")):
        with pytest.raises(IllegalActionError, match=f"seat 0 cannot {text} now .*{why}"):
            act(game, text)


# ---------------------------------------------------------------- column rule


def test_column_clear_after_swap_discard_order() -> None:
    seat0 = [7, 1, 2, 3, 7, 4, 5, 6, 8, 9, 10, 11]
    game = make_game([make_deck([seat0, G_LOW], discard=7)], 2)
    act(game, "reveal 0", "reveal 4", "reveal 0", "reveal 1")
    act(game, "take", "swap 8")
    view = game.view(1)
    assert view.discard_pile == (8, 7, 7, 7)  # the replaced card first, then the column: its value on top
    assert view.discard_top == 7
    assert view.grids[0].states == tuple(SlotState.REMOVED if p % 4 == 0 else SlotState.HIDDEN for p in range(12))
    assert view.grids[0].values[8] is None
    cleared = [e for e in game.drain_events() if e.kind is EventKind.COLUMN_CLEARED]
    assert [(e.seat, e.pos, e.value) for e in cleared] == [(0, 0, 7)]


def test_column_clear_after_reveal_discard_order() -> None:
    seat0 = [1, 2, 6, 3, 4, 5, 6, 7, 8, 9, 6, 10]  # column 2: 6, 6, 6; 2 and 6 opened, 10 revealed later
    game = make_game([make_deck([seat0, G_LOW], discard=0, draw=[-1])], 2)
    act(game, "reveal 2", "reveal 6", "reveal 0", "reveal 1")
    assert game.current_seat == 0
    act(game, "draw", "reveal 10")
    view = game.view(0)
    assert view.discard_pile == (0, -1, 6, 6, 6)  # the drawn card first
    assert [view.my_grid.states[p] for p in (2, 6, 10)] == [SlotState.REMOVED] * 3
    # positions keep their numbers: column 3 is still 3, 7, 11
    assert view.my_grid.states[3] is SlotState.HIDDEN
    act(game, "draw", "reveal 2")  # seat 1
    act(game, "draw")
    legal = game.legal_actions()
    assert Action.swap(3) in legal and Action.reveal(11) in legal
    assert not {Action.swap(2), Action.swap(6), Action.reveal(10)} & set(legal)


def test_rows_never_clear() -> None:
    seat0 = [5, 5, 5, 5, 1, 2, 3, 4, 6, 7, 8, 9]
    game = make_game([make_deck([seat0, G_LOW], discard=5, draw=[0, 0])], 2)
    act(game, "reveal 0", "reveal 1", "reveal 0", "reveal 1")
    act(game, "draw", "reveal 2", "draw", "reveal 2", "draw", "reveal 3")
    assert game.view(0).my_grid.values[:4] == (5, 5, 5, 5)


def test_column_clear_off() -> None:
    seat0 = [7, 1, 2, 3, 7, 4, 5, 6, 8, 9, 10, 11]
    game = make_game([make_deck([seat0, G_LOW], discard=7)], 2, Rules(column_clear=False))
    act(game, "reveal 0", "reveal 4", "reveal 0", "reveal 1")
    act(game, "take", "swap 8")
    view = game.view(0)
    assert view.discard_pile == (8,)
    assert view.my_grid.column(0) == (7, 7, 7)
    assert view.my_grid.states[8] is SlotState.REVEALED


# ------------------------------------------------------------ empty draw pile


def _stall_until_empty(game: Game) -> None:
    """Both seats draw and swap into their revealed slot 0 until the draw pile is empty."""
    while game.view(0).draw_pile_size:
        act(game, "draw", "swap 0")


def test_empty_draw_pile_reshuffles_all_discards_but_the_top() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW], discard=3)], 2, seed=7)
    open_all(game)
    _stall_until_empty(game)
    before = game.view(0).discard_pile
    assert len(before) == 126
    seat = game.current_seat
    assert seat is not None
    act(game, "draw")
    view = game.view(seat)
    assert view.discard_pile == before[-1:]  # the top card stays
    assert view.draw_pile_size == 124
    log = game.rounds[0]
    assert len(log.reshuffles) == 1
    assert sorted(log.reshuffles[0]) == sorted(before[:-1])  # exactly the discards below the top
    assert view.hand == log.reshuffles[0][0]  # the new pile is listed next card first
    events = [e for e in game.drain_events() if e.kind is EventKind.RESHUFFLE]
    assert [e.value for e in events] == [125]


def test_given_reshuffle_is_used_in_order_and_a_wrong_one_refused() -> None:
    deck = make_deck([G_HIGH, G_LOW], discard=3)
    probe = make_game([deck], 2, seed=7)
    open_all(probe)
    _stall_until_empty(probe)
    below = list(probe.view(0).discard_pile[:-1])
    pile = sorted(below, reverse=True)
    game = make_game([deck], 2, reshuffles=[[pile]])
    open_all(game)
    _stall_until_empty(game)
    act(game, "draw")
    assert game.view(game.seat).hand == pile[0]
    act(game, "swap 0", "draw")
    assert game.view(game.seat).hand == pile[1]

    wrong = [*pile[:-1], 13 if pile[-1] != 13 else 12]
    game = Game(2, dealer=FixedDealer([deck], [[wrong]]))
    open_all(game)
    _stall_until_empty(game)
    actions_before = len(game.rounds[0].actions)
    with pytest.raises(DealError, match="reshuffle 0 does not hold the 125 discards"):
        act(game, "draw")
    assert len(game.rounds[0].actions) == actions_before  # nothing changed
    assert game.decision is DecisionKind.DRAW_OR_TAKE and game.view(0).draw_pile_size == 0


# -------------------------------------------------------------- end of round


def test_end_of_round_finisher_and_one_more_turn_each_in_order() -> None:
    # 4 seats; seat 2 has the highest opening and finishes; then 3, 0, 1 play once each
    grids = [G_LOW, G_MID, G_HIGH, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]]
    game = make_game([make_deck(grids, 5)], 4, Rules(end_score=1000))
    open_all(game)
    assert game.current_seat == 2
    while game.finisher is None:
        turn_reveal(game)
    assert game.finisher == 2
    assert [e.seat for e in game.drain_events() if e.kind is EventKind.ROUND_FINISHING] == [2]
    after: list[int] = []
    while game.round_index == 0:
        after.append(game.seat)
        act(game, "draw", "swap 0")  # the others keep hidden cards: they must not end the round
    assert after == [3, 0, 1]
    assert game.rounds[0].finisher == 2


def test_finisher_by_swap_into_last_hidden_slot() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW], 5)], 2, Rules(end_score=1000))
    open_all(game)
    for _ in range(9):  # seat 0 reveals 2..10, seat 1 reveals 2..10
        turn_reveal(game)
        turn_reveal(game)
    assert hidden(game, 0) == [11]
    act(game, "take", "swap 11")
    assert game.finisher == 0
    act(game, "draw", "reveal 11")
    assert game.round_index == 1


def test_final_reveal_with_and_without_clear_on_final_reveal() -> None:
    # seat 1 keeps slots hidden; its column 3 is 4, 4, 4 with 11 hidden until the final reveal
    seat1 = [-1, 0, 1, 4, 2, 3, 5, 4, 6, 7, 8, 4]
    for clear, raw1 in ((True, 43 - 12), (False, 43)):
        deck = make_deck([G_HIGH, seat1], 5, draw=[0, 4, 0, 4, 0, 4, 0, 4, 0, 4])
        game = make_game([deck], 2, Rules(clear_on_final_reveal=clear))
        act(game, "reveal 0", "reveal 1", "reveal 3", "reveal 7")
        # seat 0 reveals 10 times; seat 1 draws a 4 and swaps it over its revealed 4 (no change) 5 times,
        # then reveals lowest-first: 0, 1, 2, 4, 5 -> 6, 8, 9, 10, 11 stay hidden
        log = play_round(game, swaps={1: [3, 7, 3, 7, 3]})
        assert log.finisher == 0
        assert log.raw == [54, raw1]
        grid = log.final_grids[1] if log.final_grids else None
        assert grid is not None
        assert all(s is not SlotState.HIDDEN for g in log.final_grids or () for s in g.states)
        assert (grid.states[11] is SlotState.REMOVED) == clear


def test_final_reveal_clear_needs_column_clear() -> None:
    seat1 = [-1, 0, 1, 4, 2, 3, 5, 4, 6, 7, 8, 4]
    deck = make_deck([G_HIGH, seat1], 5, draw=[0, 4, 0, 4, 0, 4, 0, 4, 0, 4])
    game = make_game([deck], 2, Rules(column_clear=False, clear_on_final_reveal=True))
    act(game, "reveal 0", "reveal 1", "reveal 3", "reveal 7")
    log = play_round(game, swaps={1: [3, 7, 3, 7, 3]})
    assert log.raw == [54, 43]


# ------------------------------------------------------------ finisher penalty

# seat 0 opens higher, starts and finishes; every seat reveals everything, so raw = grid sums
NEG_FINISHER = [5, 5, -2, -2, -2, -2, -1, -1, -1, -1, -1, 0]  # -3
NEG_LOWER = [-2, -1, -1, -1, -1, 0, 0, 0, 0, 0, 1, 0]  # -5, opening -3
EQUAL_54 = [0, 1, 12, 11, 3, 4, 1, 2, 3, 4, 5, 8]  # 54, opening 1
LOWER_53 = G_MID  # 53, opening 1


@pytest.mark.parametrize(
    ("penalty", "grids", "raw", "scores"),
    [
        ("double_if_positive", [G_HIGH, G_LOW], [54, 7], [108, 7]),
        ("double_if_positive", [G_HIGH, EQUAL_54], [54, 54], [108, 54]),  # a tie is penalised
        ("double_if_positive", [G_HIGH, LOWER_53], [54, 53], [108, 53]),
        ("double_if_positive", [NEG_FINISHER, NEG_LOWER], [-3, -5], [-3, -5]),  # not above 0: unchanged
        ("double", [G_HIGH, EQUAL_54], [54, 54], [108, 54]),
        ("double", [NEG_FINISHER, NEG_LOWER], [-3, -5], [-6, -5]),  # whatever the sign
        ("plus_10", [G_HIGH, G_LOW], [54, 7], [64, 7]),
        ("plus_10", [G_HIGH, EQUAL_54], [54, 54], [64, 54]),
        ("plus_10", [NEG_FINISHER, NEG_LOWER], [-3, -5], [7, -5]),
        ("double", [G_LOW, G_MID], [7, 53], [7, 53]),  # strictly lowest: no penalty
        ("double_if_positive", [G_LOW, G_MID], [7, 53], [7, 53]),
        ("plus_10", [G_LOW, G_MID], [7, 53], [7, 53]),
    ],
)
def test_finisher_penalty(penalty: str, grids: list[list[int]], raw: list[int], scores: list[int]) -> None:
    rules = Rules(finisher_penalty=penalty, end_score=10_000)  # type: ignore[arg-type]
    game = make_game([make_deck(grids, 5)], 2, rules)
    open_all(game)
    assert game.current_seat == 0
    log = play_round(game)
    assert (log.finisher, log.raw, log.scores) == (0, raw, scores)
    assert game.totals == scores  # added to the totals, negative ones too


def test_finisher_penalty_with_three_players_one_lower() -> None:
    game = make_game([make_deck([G_LOW, G_MID, [1, 2, 1, 1, 0, 0, -1, 0, 0, 0, 0, 0]], 5)], 3)
    # seat 0 opens 3, seat 1 opens 1, seat 2 opens 3 -> seat 0 starts (tie, lowest seat) and finishes
    open_all(game)
    log = play_round(game)
    assert log.raw == [7, 53, 4] and log.scores == [14, 53, 4]


# ---------------------------------------------------------------- end of game


def test_end_score_reached_ends_the_game() -> None:
    for end_score, over in ((100, True), (108, True), (109, False)):
        game = make_game([make_deck([G_HIGH, G_LOW], 5)], 2, Rules(end_score=end_score))
        open_all(game)
        play_round(game)
        assert game.over is over, end_score
        if over:
            assert game.totals == [108, 7] and game.ranks == [2, 1] and game.winners == [1]
            assert game.current_seat is None and game.legal_actions() == ()
            assert all(game.view(s).legal_actions == () for s in range(2))
            with pytest.raises(IllegalActionError, match="the game is over"):
                act(game, "draw")
        else:
            assert game.round_index == 1


def test_final_tie_shared() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW, G_LOW], 5)], 3)
    open_all(game)
    play_round(game)
    assert game.over
    assert game.totals == [108, 7, 7] and game.ranks == [3, 1, 1] and game.winners == [1, 2]
    events = game.drain_events()
    assert events[-1].kind is EventKind.GAME_END and events[-1].winners == (1, 2)


def test_final_tie_extra_round_plays_until_one_lowest() -> None:
    rules = Rules(final_tie="extra_round")  # type: ignore[arg-type]
    round1 = make_deck([G_LOW, G_HIGH, G_MID], 5)
    game = make_game([make_deck([G_HIGH, G_LOW, G_LOW], 5), round1], 3, rules)
    open_all(game)
    play_round(game)
    assert not game.over and game.totals == [108, 7, 7]  # tied lowest: another round
    open_all(game)
    assert game.current_seat == 0  # finisher of round 0 starts
    log = play_round(game)
    assert log.scores == [7, 54, 53]
    assert game.over and game.totals == [115, 61, 60] and game.winners == [2] and game.ranks == [3, 2, 1]


def test_final_tie_extra_round_continues_while_tied() -> None:
    rules = Rules(final_tie="extra_round")  # type: ignore[arg-type]
    # round 1 keeps seats 1 and 2 tied (both +7); seat 0 finishes with 54 -> 108 again
    decks = [make_deck([G_HIGH, G_LOW, G_LOW], 5)] * 2 + [make_deck([G_LOW, G_HIGH, G_MID], 5)]
    game = make_game(decks, 3, rules)
    for expected in ([108, 7, 7], [216, 14, 14]):
        open_all(game)
        play_round(game)
        assert game.totals == expected and not game.over
    open_all(game)
    play_round(game)
    assert game.over and game.winners == [2]


# -------------------------------------------------------------------- ranks


def test_competition_ranks() -> None:
    assert competition_ranks([5, 5, 9]) == [1, 1, 3]
    assert competition_ranks([9, 5, 5]) == [3, 1, 1]
    assert competition_ranks([1, 2, 3, 4]) == [1, 2, 3, 4]
    assert competition_ranks([-4, 7, -4, 7]) == [1, 3, 1, 3]


def test_forfeits_rank_after_everyone_and_among_themselves() -> None:
    assert competition_ranks([5, 5, 9], forfeits=[0]) == [3, 1, 2]
    assert competition_ranks([1, 50, 90, 2], forfeits=[0, 3]) == [3, 1, 2, 4]
    assert competition_ranks([1, 50, 90, 1], forfeits=[0, 3]) == [3, 1, 2, 3]


def test_mark_forfeit_reranks_a_finished_game() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW, G_MID], 5)], 3)
    open_all(game)
    play_round(game)
    assert game.over and game.ranks == [3, 1, 2]
    game.mark_forfeit(1)
    assert game.ranks == [2, 3, 1] and game.winners == [2]


# ------------------------------------------------------------- players, rules


@pytest.mark.parametrize("n", range(2, 9))
def test_two_to_eight_players(n: int) -> None:
    game = Game(n, seed=n)
    assert len(game.view(0).grids) == n
    assert game.view(0).draw_pile_size == DECK_SIZE - 12 * n - 1


@pytest.mark.parametrize("n", [0, 1, 9, 12, True, "3", 2.0])
def test_other_player_counts_refused(n: object) -> None:
    with pytest.raises(ValueError, match="Skyjo is played by 2 to 8 players, got"):
        Game(n, seed=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"columns": True}, "unknown rules option 'columns'"),
        ({"preset": "official", "end_scor": 50}, "unknown rules option 'end_scor'"),
        ({"preset": "klingon"}, "unknown rules preset 'klingon': expected one of official, indonesian"),
        ({"preset": 3}, "unknown rules preset 3"),
        ({"column_clear": "yes"}, "column_clear must be true or false, got 'yes'"),
        ({"column_clear": 1}, "column_clear must be true or false, got 1"),
        ({"clear_on_final_reveal": None}, "clear_on_final_reveal must be true or false"),
        ({"finisher_penalty": "triple"}, "finisher_penalty must be one of double_if_positive, double, plus_10"),
        ({"finisher_penalty": ["double"]}, "finisher_penalty must be one of"),
        ({"next_round_starter": "loser"}, "next_round_starter must be one of finisher, round_winner, highest_reveal"),
        ({"end_score": 0}, "end_score must be an integer > 0, got 0"),
        ({"end_score": -5}, "end_score must be an integer > 0"),
        ({"end_score": "100"}, "end_score must be an integer, got '100'"),
        ({"end_score": True}, "end_score must be an integer, got True"),
        ({"end_score": 100.0}, "end_score must be an integer"),
        ({"final_tie": "coin_flip"}, "final_tie must be one of shared, extra_round"),
    ],
)
def test_bad_rules_refused(data: dict[str, object], message: str) -> None:
    with pytest.raises(RulesError) as info:
        Rules.from_dict(data)
    assert message in str(info.value)


def test_rules_options_beside_a_preset_override_it() -> None:
    rules = Rules.from_dict({"preset": "french", "column_clear": False, "end_score": 50})
    assert rules.finisher_penalty == "plus_10" and not rules.column_clear and rules.end_score == 50
    assert rules.to_dict() == {"preset": "french", "column_clear": False, "end_score": 50}
    assert Rules.from_dict(rules.to_dict()) == rules
    assert Rules.from_dict({}) == Rules() and Rules.from_dict(None) == Rules()
    assert Rules.from_dict({"finisher_penalty": "double"}).to_dict() == {"finisher_penalty": "double"}


# ------------------------------------------------------------- illegal actions


def _snapshot(game: Game) -> object:
    return (
        game.seat,
        game.decision,
        game.legal_actions(),
        [game.view(s) for s in range(game.num_players)],
        [len(r.actions) for r in game.rounds],
        list(game.draw_pile),
        game.hand,
        list(game.totals),
    )


def test_illegal_actions_name_seat_action_why_and_change_nothing() -> None:
    game = make_game([make_deck([G_HIGH, G_LOW], 5)], 2)
    open_all(game)
    act(game, "draw")
    cases = {
        "take": "seat 0 cannot take now (swap_or_reveal is due: expected swap POS, or reveal POS of a hidden slot)",
        "draw": "seat 0 cannot draw now (swap_or_reveal is due",
        "reveal 1": "seat 0 cannot reveal 1 now (swap_or_reveal is due: position 1 is already revealed)",
    }
    for text, message in cases.items():
        before = _snapshot(game)
        with pytest.raises(IllegalActionError) as info:
            act(game, text)
        assert message in str(info.value)
        assert _snapshot(game) == before
    with pytest.raises(IllegalActionError, match="is not an Action"):
        game.apply("draw")  # type: ignore[arg-type]
    act(game, "reveal 5")
    assert game.current_seat == 1


def test_illegal_error_is_a_value_error() -> None:
    assert issubclass(IllegalActionError, ValueError)
    assert issubclass(RulesError, ValueError)


# ------------------------------------------------------------------ presets


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("official", {}),
        ("indonesian", {"finisher_penalty": "double", "next_round_starter": "round_winner"}),
        ("turkish", {"finisher_penalty": "double", "next_round_starter": "round_winner"}),
        ("french", {"finisher_penalty": "plus_10", "next_round_starter": "highest_reveal"}),
        (
            "slovenian",
            {"finisher_penalty": "double", "next_round_starter": "highest_reveal", "final_tie": "extra_round"},
        ),
    ],
)
def test_presets(preset: str, options: dict[str, object]) -> None:
    official = {
        "column_clear": True,
        "clear_on_final_reveal": True,
        "finisher_penalty": "double_if_positive",
        "next_round_starter": "finisher",
        "end_score": 100,
        "final_tie": "shared",
    }
    rules = Rules.preset_named(preset)
    assert rules.options() == {**official, **options}
    assert rules.preset == preset
    assert rules.to_dict() == {"preset": preset}


def test_presets_play_their_rule() -> None:
    """Each preset's distinctive rule, played: the same deal, different scores and starters."""
    for preset, scores in (("official", [-3, -5]), ("indonesian", [-6, -5]), ("french", [7, -5])):
        game = make_game([make_deck([NEG_FINISHER, NEG_LOWER], 5)], 2, Rules.preset_named(preset))
        open_all(game)
        assert play_round(game).scores == scores, preset
    for preset, starter in (("official", 0), ("turkish", 1), ("french", 2), ("slovenian", 2)):
        game = _two_round_game(Rules.preset_named(preset).next_round_starter.value)
        assert game.current_seat == starter, preset


# Each preset claims rules from a rulebook text in docs/rulebooks; the quotes say where.
SEEDS = Path(__file__).resolve().parents[1] / "docs" / "rulebooks"
CLAIMS = [
    ("000", "pemain yang memenangkan putaran sebelumnya akan memulai putaran berikutnya", "indonesian",
     "next_round_starter", "round_winner"),
    ("000", "tidak memiliki skor terendah, maka skor mereka akan digandakan", "indonesian",
     "finisher_penalty", "double"),
    ("001", "bir önceki turu kazanan oyuncu bir sonraki tura başlayacaktır", "turkish",  # noqa: RUF001
     "next_round_starter", "round_winner"),
    ("001", "en düşük puana sahip değilse, onun puanı ikiye katlanır", "turkish",  # noqa: RUF001
     "finisher_penalty", "double"),
    ("002", "il doit ajouter 10 points à son score", "french", "finisher_penalty", "plus_10"),
    ("002", "Le joueur possédant la somme des deux cartes la plus élevée commence la manche", "french",
     "next_round_starter", "highest_reveal"),
    ("003", "nima strogo najnižjega seštevka, se mu točke tega kroga podvojijo", "slovenian",
     "finisher_penalty", "double"),
    ("003", "Ob izenačenju odigrajte še en krog", "slovenian", "final_tie", "extra_round"),
    ("003", "Začne igralec z najvišjim seštevkom odkritih kart", "slovenian", "next_round_starter", "highest_reveal"),
    ("003", "Stolpec lahko odvržeš takoj, ko izpolni ta pogoj", "slovenian", "clear_on_final_reveal", True),
]  # fmt: skip


@pytest.mark.parametrize(("text", "quote", "preset", "option", "value"), CLAIMS)
def test_preset_matches_its_rulebook_text(text: str, quote: str, preset: str, option: str, value: object) -> None:
    assert Rules.preset_named(preset).options()[option] == value
    (file,) = SEEDS.glob(f"{text}_*.txt")
    assert quote in file.read_text(encoding="utf-8")


def test_column_rule_is_optional_in_texts_000_and_001() -> None:
    """Texts 000 and 001 call the column rule optional: their presets take column_clear false beside them."""
    for preset in ("indonesian", "turkish"):
        rules = Rules.from_dict({"preset": preset, "column_clear": False})
        assert not rules.column_clear and rules.finisher_penalty == "double"
        game = make_game([make_deck([[7, 1, 2, 3, 7, 4, 5, 6, 8, 9, 10, 11], G_LOW], discard=7)], 2, rules)
        act(game, "reveal 0", "reveal 4", "reveal 0", "reveal 1", "take", "swap 8")
        assert game.view(0).my_grid.column(0) == (7, 7, 7)
