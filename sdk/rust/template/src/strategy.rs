//! The strategy: replace `decide` with yours. It receives everything your seat may see (`view`) and returns
//! one of `view.legal_actions`.
//!
//! This one is the reference strategy every skyjo-ref SDK starts from (examples/python/minimal_bot.py),
//! move for move: keep low cards.

use skyjo_bot::{Action, DecisionKind, View};

/// Take a low discard, put every card where it lowers the score most.
pub fn decide(view: &View) -> Action {
    let grid = view.my_grid(); // your 12 slots: grid.value(pos) is None while a card is hidden
    let hidden = grid.hidden_positions(); // ascending

    // Opening: reveal any two of your hidden cards.
    if view.decision == DecisionKind::OpeningReveal {
        return Action::reveal(hidden[0]);
    }

    // Start of a turn: take the top discard when it is low, otherwise draw.
    if view.decision == DecisionKind::DrawOrTake {
        return match view.discard_top() {
            Some(top) if top <= 3 => Action::take(),
            _ => Action::draw(),
        };
    }

    // You hold a card (view.hand): put it where it saves the most points.
    let card = view.hand.expect("a swap decision comes with a card in hand");
    let revealed = grid.revealed_positions(); // ascending
    let mut worst: Option<usize> = None; // the first revealed position with the highest value
    for &pos in &revealed {
        if worst.is_none_or(|w| grid.value(pos) > grid.value(w)) {
            worst = Some(pos);
        }
    }
    if let Some(worst) = worst.filter(|&w| grid.value(w).unwrap_or(0) > card) {
        return Action::swap(worst); // replace your highest revealed card
    }
    if !hidden.is_empty() && card <= 4 {
        return Action::swap(hidden[0]); // a low card beats an unknown one (about 5 on average)
    }
    if !hidden.is_empty() && view.decision == DecisionKind::SwapOrReveal {
        return Action::reveal(hidden[0]); // discard the drawn card and turn a hidden one
    }
    // A card you took must be placed somewhere.
    Action::swap(if let Some(&first) = hidden.first() { first } else { revealed[0] })
}
