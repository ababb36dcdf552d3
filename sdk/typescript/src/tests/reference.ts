/**
 * The reference strategy (examples/python/minimal_bot.py, move for move), as the template bot plays it.
 * The template's src/bot.ts holds the same lines; tests/test_sdk_typescript.py checks that they agree.
 */

import { Action, DecisionKind, type View } from '../index.js';

// reference-strategy-start
export function decide(view: View): Action {
  const grid = view.myGrid; // your 12 slots: grid.values[pos] is null while a card is hidden
  const hidden = grid.hiddenPositions(); // ascending

  // Opening: reveal any two of your hidden cards.
  if (view.decision === DecisionKind.OPENING_REVEAL) return Action.reveal(hidden[0]!);

  // Start of a turn: take the top discard when it is low, otherwise draw.
  if (view.decision === DecisionKind.DRAW_OR_TAKE) {
    const top = view.discardTop;
    return top !== null && top <= 3 ? Action.take() : Action.draw();
  }

  // You hold a card (view.hand): put it where it saves the most points.
  const card = view.hand!;
  const revealed = grid.revealedPositions(); // ascending
  let worst: number | null = null; // the first revealed position of the highest value
  for (const pos of revealed) if (worst === null || grid.values[pos]! > grid.values[worst]!) worst = pos;
  if (worst !== null && grid.values[worst]! > card) return Action.swap(worst); // replace your highest card
  if (hidden.length > 0 && card <= 4) return Action.swap(hidden[0]!); // a low card beats an unknown one
  if (hidden.length > 0 && view.decision === DecisionKind.SWAP_OR_REVEAL) return Action.reveal(hidden[0]!);
  // A card you took must be placed somewhere.
  return Action.swap(hidden.length > 0 ? hidden[0]! : revealed[0]!);
}
// reference-strategy-end
