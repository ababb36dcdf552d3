// The bot's strategy: the reference strategy every skyjo-ref template plays (examples/python/minimal_bot.py),
// move for move. Replace it with your own: decide gets everything your seat may see (view) and returns one
// of view.legal_actions.
#pragma once

#include <skyjo/skyjo.h>

inline skyjo::Action reference_decide(const skyjo::View& view) {
  using skyjo::Action;
  using skyjo::DecisionKind;
  const skyjo::Grid& grid = view.my_grid();  // your 12 slots: grid.values[pos] is empty while a card is hidden
  const std::vector<int> hidden = grid.hidden_positions();

  // Opening: reveal any two of your hidden cards.
  if (view.decision == DecisionKind::OpeningReveal) return Action::reveal(hidden.front());

  // Start of a turn: take the top discard when it is low, otherwise draw.
  if (view.decision == DecisionKind::DrawOrTake) {
    auto top = view.discard_top();
    return top && *top <= 3 ? Action::take() : Action::draw();
  }

  // You hold a card (view.hand): put it where it saves the most points.
  const int card = view.hand.value();
  const std::vector<int> revealed = grid.revealed_positions();
  std::optional<int> worst;  // the first revealed position of the highest value
  for (int pos : revealed) {
    if (!worst || *grid.values[pos] > *grid.values[*worst]) worst = pos;
  }
  if (worst && *grid.values[*worst] > card) return Action::swap(*worst);  // replace your highest revealed card
  if (!hidden.empty() && card <= 4) return Action::swap(hidden.front());  // a low card beats an unknown one
  if (!hidden.empty() && view.decision == DecisionKind::SwapOrReveal) {
    return Action::reveal(hidden.front());  // discard the drawn card and turn a hidden one
  }
  // A card you took must be placed somewhere.
  return Action::swap(hidden.empty() ? revealed.front() : hidden.front());
}
