/**
 * __BOT_NAME__: a Skyjo bot on the skyjo-ref TypeScript SDK (skyjo-sdk/).
 *
 * The strategy below is the reference strategy every skyjo-ref template plays (the Python
 * examples/python/minimal_bot.py, move for move): keep low cards. Replace `decide` with yours; `view`
 * holds everything your seat may see, `view.legalActions` what you may play. Build with ./build, then:
 *
 *   SKYJO_ADDR=127.0.0.1:50051 SKYJO_TOKEN=... node dist/bot.js      (a league starts it for you)
 */

import { Action, type Bot, DecisionKind, run, type View } from '@skyjo/sdk';

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

export const bot: Bot = { name: '__BOT_NAME__', version: '1.0.0', decide };

await run(bot); // plays until the referee ends the session, then exits
