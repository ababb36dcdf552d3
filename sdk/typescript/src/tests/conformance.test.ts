/**
 * The conformance vectors (the repository's conformance/, see its README.md): every recorded request is
 * decoded, read into a View that must equal the expected view, and answered by the reference strategy
 * with the expected action; the seeded games are replayed decision by decision.
 */

import { fromBinary } from '@bufbuild/protobuf';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { gameStartFromProto, viewFromRequest } from '../convert.js';
import * as pb from '../gen/skyjo/v1/skyjo_pb.js';
import type { GameStart, View } from '../types.js';
import { decide } from './reference.js';

/** dist/tests/ -> the repository root's conformance/ (or SKYJO_CONFORMANCE_DIR). */
const DIR = process.env.SKYJO_CONFORMANCE_DIR || fileURLToPath(new URL('../../../../conformance/', import.meta.url));

function read(name: string): any {
  const path = join(DIR, name);
  assert.ok(existsSync(path), `conformance vectors not found at ${path}: run the tests inside the skyjo-ref repository`);
  const data = JSON.parse(readFileSync(path, 'utf8'));
  assert.equal(data.format, 'skyjo-conformance/1');
  return data;
}

function decode(base64: string): pb.PlayResponse {
  return fromBinary(pb.PlayResponseSchema, Buffer.from(base64, 'base64'));
}

function gameStart(base64: string): GameStart {
  const msg = decode(base64).message;
  assert.equal(msg.case, 'gameStart');
  return gameStartFromProto(msg.value);
}

function view(base64: string, start: GameStart): View {
  const msg = decode(base64).message;
  assert.equal(msg.case, 'decision');
  return viewFromRequest(msg.value, start);
}

/** The view in the vectors' JSON form (the Python SDK's names). */
function asJson(v: View): unknown {
  const r = v.rules;
  const tc = v.timeControl;
  return {
    game_id: v.gameId,
    request_id: Number(v.requestId),
    seat: v.seat,
    players: v.players,
    num_players: v.numPlayers,
    rules: {
      preset: r.preset,
      column_clear: r.columnClear,
      clear_on_final_reveal: r.clearOnFinalReveal,
      finisher_penalty: r.finisherPenalty,
      next_round_starter: r.nextRoundStarter,
      end_score: r.endScore,
      final_tie: r.finalTie,
    },
    time_control: tc && {
      decision_ms: tc.decisionMs,
      bank_ms: tc.bankMs,
      max_strikes: tc.maxStrikes,
      grace_ms: tc.graceMs,
    },
    round: v.round,
    decision: v.decision,
    grids: v.grids.map((g) => ({ states: g.states, values: g.values })),
    discard_pile: v.discardPile,
    discard_top: v.discardTop,
    draw_pile_size: v.drawPileSize,
    hand: v.hand,
    totals: v.totals,
    round_scores: v.roundScores,
    finisher: v.finisher,
    starter: v.starter,
    legal_actions: v.legalActions.map(String),
    time_left_ms: v.timeLeftMs,
  };
}

test('every vector reads as its expected view and gets the reference answer', () => {
  const { vectors } = read('views.json');
  assert.ok(vectors.length >= 40, `expected the whole set of vectors, found ${vectors.length}`);
  const features = new Set<string>();
  for (const vector of vectors) {
    const v = view(vector.request, gameStart(vector.game_start));
    assert.deepEqual(JSON.parse(JSON.stringify(asJson(v))), vector.view, `view of ${vector.name}`);
    assert.equal(String(decide(v)), vector.reference, `reference answer to ${vector.name}`);
    for (const f of vector.features) features.add(f);
  }
  for (const needed of ['decision:swap_after_take', 'last-turn', 'removed-slots', 'tied-worst', 'players:8']) {
    assert.ok(features.has(needed), `no vector covers ${needed}`);
  }
});

test('the seeded games: the reference strategy makes every recorded move', () => {
  const names = readdirSync(join(DIR, 'matches')).filter((n) => n.endsWith('.json'));
  assert.ok(names.length >= 3, `expected the seeded games in ${join(DIR, 'matches')}`);
  for (const name of names) {
    const game = read(join('matches', name));
    const start = gameStart(game.game_start);
    assert.ok(game.decisions.length > 0);
    game.decisions.forEach((d: { request: string; reference: string }, i: number) => {
      assert.equal(String(decide(view(d.request, start))), d.reference, `${name}: decision ${i}`);
    });
  }
});
