/**
 * The bot interface: one call that receives a View and returns an Action, and optional hooks.
 *
 * The SDK calls them in message order, one at a time: `onGameStart`, then `onEvent` and `decide` as the game
 * goes, `onRoundResult` at each round's end, `onGameOver`; `onStrike` when the referee played for you.
 */

import type { Action, Event, GameResult, GameStart, RoundResult, Strike, View } from './types.js';

export interface Bot {
  /** sent in Hello (default: "typescript-bot"); the seat's name in tables comes from the league */
  readonly name?: string;
  /** your version, sent in Hello and kept in every game record's meta.bots */
  readonly version?: string;
  /** One of `view.legalActions`. A throw (or a rejected promise) becomes an error reply with its text. */
  decide(view: View): Action | Promise<Action>;
  /** A game begins: your seat, the players, the rules and the time control. */
  onGameStart?(start: GameStart): void;
  /** Something public happened at the table (also `round_end` and `game_end`, as Python bots see them). */
  onEvent?(event: Event): void;
  /** A round ended: every seat's scores. */
  onRoundResult?(result: RoundResult): void;
  /** The game ended (the stream stays open: the next game follows). */
  onGameOver?(result: GameResult): void;
  /** The referee struck this seat and played for it. */
  onStrike?(strike: Strike): void;
}

/** A bot made of one function `view -> action`. */
export function bot(decide: (view: View) => Action | Promise<Action>, name = decide.name || 'function-bot'): Bot {
  return { name, decide };
}
