/**
 * Between the wire (the generated protobuf-es messages in gen/) and the SDK's vocabulary (types.ts).
 *
 * Reading is strict where a wrong reading would mislead a bot (a grid that is not 12 slots, a revealed slot
 * without a value): ProtocolError names what is wrong. Event kinds this version does not know are skipped.
 */

import { create } from '@bufbuild/protobuf';

import * as pb from './gen/skyjo/v1/skyjo_pb.js';
import {
  Action,
  DecisionKind,
  type Event,
  EventKind,
  FinalTie,
  FinisherPenalty,
  type GameResult,
  type GameStart,
  GRID_SIZE,
  Grid,
  NextRoundStarter,
  OFFICIAL_RULES,
  type RoundResult,
  type Rules,
  SlotState,
  type Strike,
  type TimeControl,
  View,
} from './types.js';

/** The protocol version this SDK speaks (sent in Hello). */
export const PROTOCOL_VERSION = 1;

/** A message the SDK cannot read as the protocol says it should be. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

const ACTION_FROM_PB = new Map<pb.ActionKind, string>([
  [pb.ActionKind.REVEAL, 'reveal'],
  [pb.ActionKind.DRAW, 'draw'],
  [pb.ActionKind.TAKE, 'take'],
  [pb.ActionKind.SWAP, 'swap'],
]);
const ACTION_TO_PB = new Map<string, pb.ActionKind>([...ACTION_FROM_PB].map(([k, v]) => [v, k]));
const DECISION_FROM_PB = new Map<pb.DecisionKind, DecisionKind>([
  [pb.DecisionKind.OPENING_REVEAL, DecisionKind.OPENING_REVEAL],
  [pb.DecisionKind.DRAW_OR_TAKE, DecisionKind.DRAW_OR_TAKE],
  [pb.DecisionKind.SWAP_OR_REVEAL, DecisionKind.SWAP_OR_REVEAL],
  [pb.DecisionKind.SWAP_AFTER_TAKE, DecisionKind.SWAP_AFTER_TAKE],
]);
const SLOT_FROM_PB = new Map<pb.SlotState, SlotState>([
  [pb.SlotState.HIDDEN, SlotState.HIDDEN],
  [pb.SlotState.REVEALED, SlotState.REVEALED],
  [pb.SlotState.REMOVED, SlotState.REMOVED],
]);
const PENALTY_FROM_PB = new Map<pb.FinisherPenalty, FinisherPenalty>([
  [pb.FinisherPenalty.DOUBLE_IF_POSITIVE, FinisherPenalty.DOUBLE_IF_POSITIVE],
  [pb.FinisherPenalty.DOUBLE, FinisherPenalty.DOUBLE],
  [pb.FinisherPenalty.PLUS_10, FinisherPenalty.PLUS_10],
]);
const STARTER_FROM_PB = new Map<pb.NextRoundStarter, NextRoundStarter>([
  [pb.NextRoundStarter.FINISHER, NextRoundStarter.FINISHER],
  [pb.NextRoundStarter.ROUND_WINNER, NextRoundStarter.ROUND_WINNER],
  [pb.NextRoundStarter.HIGHEST_REVEAL, NextRoundStarter.HIGHEST_REVEAL],
]);
const TIE_FROM_PB = new Map<pb.FinalTie, FinalTie>([
  [pb.FinalTie.SHARED, FinalTie.SHARED],
  [pb.FinalTie.EXTRA_ROUND, FinalTie.EXTRA_ROUND],
]);
const EVENT_KINDS: ReadonlySet<string> = new Set(Object.values(EventKind));

/** Named option sets (the Python SDK's PRESETS): what an unset GameStart field falls back to. */
const PRESETS: Readonly<Record<string, Partial<Rules>>> = {
  official: {},
  indonesian: { finisherPenalty: 'double', nextRoundStarter: 'round_winner' },
  turkish: { finisherPenalty: 'double', nextRoundStarter: 'round_winner' },
  french: { finisherPenalty: 'plus_10', nextRoundStarter: 'highest_reveal' },
  slovenian: { finisherPenalty: 'double', nextRoundStarter: 'highest_reveal', finalTie: 'extra_round' },
};

function enumOption<K, V>(name: string, value: K, table: ReadonlyMap<K, V>): V {
  const found = table.get(value);
  if (found === undefined) throw new ProtocolError(`rules option ${name} has unknown enum value ${String(value)}`);
  return found;
}

/** The rules in force: the preset (empty: official) with every set field overriding it. */
export function rulesFromProto(msg: pb.Rules | undefined): Rules {
  const preset = msg?.preset || 'official';
  const base = { ...OFFICIAL_RULES, ...(PRESETS[preset] ?? {}), preset };
  if (msg === undefined) return Object.freeze(base);
  const columnClear = msg.columnClear ?? base.columnClear;
  return Object.freeze({
    preset,
    columnClear,
    clearOnFinalReveal: (msg.clearOnFinalReveal ?? base.clearOnFinalReveal) && columnClear,
    finisherPenalty: msg.finisherPenalty
      ? enumOption('finisher_penalty', msg.finisherPenalty, PENALTY_FROM_PB)
      : base.finisherPenalty,
    nextRoundStarter: msg.nextRoundStarter
      ? enumOption('next_round_starter', msg.nextRoundStarter, STARTER_FROM_PB)
      : base.nextRoundStarter,
    endScore: msg.endScore || base.endScore,
    finalTie: msg.finalTie ? enumOption('final_tie', msg.finalTie, TIE_FROM_PB) : base.finalTie,
  });
}

export function timeControlFromProto(msg: pb.TimeControl | undefined): TimeControl | null {
  if (msg === undefined) return null;
  return Object.freeze({
    decisionMs: msg.decisionMs,
    bankMs: msg.bankMs,
    maxStrikes: msg.maxStrikes,
    graceMs: msg.graceMs,
  });
}

export function gameStartFromProto(msg: pb.GameStart): GameStart {
  return Object.freeze({
    gameId: msg.gameId,
    seat: msg.seat,
    players: Object.freeze([...msg.players]),
    rules: rulesFromProto(msg.rules),
    timeControl: timeControlFromProto(msg.timeControl),
  });
}

export function actionFromProto(msg: pb.Action): Action {
  const kind = ACTION_FROM_PB.get(msg.kind);
  if (kind === undefined) throw new ProtocolError(`action kind ${msg.kind} is not reveal, draw, take or swap`);
  try {
    return Action.of(kind, msg.pos ?? null);
  } catch (err) {
    throw new ProtocolError(`action ${kind} ${msg.pos ?? ''}: ${(err as Error).message}`);
  }
}

export function actionToProto(action: Action): pb.Action {
  const kind = ACTION_TO_PB.get(action.kind)!;
  return action.pos === null ? create(pb.ActionSchema, { kind }) : create(pb.ActionSchema, { kind, pos: action.pos });
}

function gridFromProto(msg: pb.Grid, index: number): Grid {
  if (msg.slots.length !== GRID_SIZE) {
    throw new ProtocolError(`grid ${index} has ${msg.slots.length} slots, expected ${GRID_SIZE}`);
  }
  const states: SlotState[] = [];
  const values: (number | null)[] = [];
  msg.slots.forEach((slot, pos) => {
    const state = SLOT_FROM_PB.get(slot.state);
    if (state === undefined) {
      throw new ProtocolError(`grid ${index} slot ${pos} has state ${slot.state}: expected hidden, revealed or removed`);
    }
    const hasValue = slot.value !== undefined;
    if ((state === SlotState.REVEALED) !== hasValue) {
      throw new ProtocolError(
        `grid ${index} slot ${pos} is ${state} and ${hasValue ? 'has' : 'lacks'} a value: only revealed slots carry one`,
      );
    }
    states.push(state);
    values.push(slot.value ?? null);
  });
  return new Grid(Object.freeze(states), Object.freeze(values));
}

/** The View (with its legal actions) a request asks about, in the game `start` began. */
export function viewFromRequest(msg: pb.DecisionRequest, start: GameStart): View {
  const view = msg.view;
  if (view === undefined) throw new ProtocolError(`decision request ${msg.requestId} has no view`);
  const legalActions = Object.freeze(msg.legalActions.map(actionFromProto));
  if (legalActions.length === 0) throw new ProtocolError(`decision request ${msg.requestId} lists no legal actions`);
  const decision = DECISION_FROM_PB.get(view.decision);
  if (decision === undefined) {
    throw new ProtocolError(`view.decision is ${view.decision}: expected one of the four DecisionKind values`);
  }
  const grids = Object.freeze(view.grids.map(gridFromProto));
  const n = grids.length;
  if (n !== start.players.length) throw new ProtocolError(`view has ${n} grids for ${start.players.length} players`);
  if (view.seat >= n) throw new ProtocolError(`view.seat ${view.seat} is not a seat of this ${n}-player game`);
  if (view.totals.length !== n) throw new ProtocolError(`view has ${view.totals.length} totals for ${n} players`);
  return new View({
    gameId: msg.gameId,
    requestId: msg.requestId,
    seat: view.seat,
    players: start.players,
    rules: start.rules,
    timeControl: start.timeControl,
    round: view.round,
    decision,
    grids,
    discardPile: Object.freeze([...view.discardPile]),
    drawPileSize: view.drawPileSize,
    hand: view.hand ?? null,
    totals: Object.freeze([...view.totals]),
    roundScores: Object.freeze(view.roundScores.map((s) => Object.freeze([...s.values]))),
    finisher: view.finisher ?? null,
    starter: view.starter ?? null,
    legalActions,
    timeLeftMs: msg.timeLeftMs,
  });
}

/** The events of a batch (or those a DecisionRequest carries), skipping kinds this version does not know. */
export function eventsFromProto(events: readonly pb.Event[]): Event[] {
  const out: Event[] = [];
  for (const msg of events) {
    if (!EVENT_KINDS.has(msg.kind)) continue;
    const event: { -readonly [K in keyof Event]: Event[K] } = { kind: msg.kind as EventKind };
    if (msg.seat !== undefined) event.seat = msg.seat;
    if (msg.pos !== undefined) event.pos = msg.pos;
    if (msg.value !== undefined) event.value = msg.value;
    if (msg.replaced !== undefined) event.replaced = msg.replaced;
    if (msg.round !== undefined) event.round = msg.round;
    out.push(Object.freeze(event));
  }
  return out;
}

export function roundResultFromProto(msg: pb.RoundResult): RoundResult {
  return Object.freeze({
    gameId: msg.gameId,
    round: msg.round,
    finisher: msg.finisher,
    raw: Object.freeze([...msg.raw]),
    scores: Object.freeze([...msg.scores]),
    totals: Object.freeze([...msg.totals]),
  });
}

/** The `round_end` event an in-process Python bot would have seen. */
export function roundEndEvent(result: RoundResult): Event {
  return Object.freeze({
    kind: EventKind.ROUND_END,
    round: result.round,
    seat: result.finisher,
    raw: result.raw,
    scores: result.scores,
    totals: result.totals,
  });
}

export function gameOverFromProto(msg: pb.GameOver): GameResult {
  return Object.freeze({
    gameId: msg.gameId,
    totals: Object.freeze([...msg.totals]),
    ranks: Object.freeze([...msg.ranks]),
    winners: Object.freeze([...msg.winners]),
    forfeits: Object.freeze([...msg.forfeits]),
  });
}

/** The `game_end` event an in-process Python bot would have seen. */
export function gameEndEvent(result: GameResult): Event {
  return Object.freeze({
    kind: EventKind.GAME_END,
    totals: result.totals,
    ranks: result.ranks,
    winners: result.winners,
  });
}

export function strikeFromProto(msg: pb.Strike): Strike {
  let played: Action | null = null;
  if (msg.played !== undefined) {
    try {
      played = actionFromProto(msg.played);
    } catch {
      played = null;
    }
  }
  return Object.freeze({
    gameId: msg.gameId,
    requestId: msg.requestId,
    reason: msg.reason,
    detail: msg.detail,
    played,
    strikes: msg.strikes,
    maxStrikes: msg.maxStrikes,
  });
}

export function hello(name: string, version: string): pb.PlayRequest {
  return create(pb.PlayRequestSchema, {
    message: { case: 'hello', value: { name, version, protocolVersion: PROTOCOL_VERSION } },
  });
}

/** A reply by index when `action` is among `legalActions`, else spelled out. */
export function replyTo(requestId: bigint, action: Action, legalActions: readonly Action[]): pb.PlayRequest {
  const index = legalActions.indexOf(action);
  const choice =
    index >= 0
      ? ({ case: 'index', value: index } as const)
      : ({ case: 'action', value: actionToProto(action) } as const);
  return create(pb.PlayRequestSchema, { message: { case: 'reply', value: { requestId, choice } } });
}

/** `DecisionReply.error`: the bot could not decide; the referee strikes at once and records `reason`. */
export function errorReply(requestId: bigint, reason: string): pb.PlayRequest {
  return create(pb.PlayRequestSchema, {
    message: { case: 'reply', value: { requestId, choice: { case: 'error', value: reason.slice(0, 1000) } } },
  });
}
