/* The game viewer's table: rebuilds every position of a skyjo-game/1 record.
 *
 * It only follows the record (the cards it lists, the actions it lists); it
 * decides nothing the record does not say, and it checks its own round
 * scores against the record's: a mismatch is shown, never hidden (rounds and
 * actions counted from 1 there, as people read them). Used by the
 * report page and, under Node, by the tests that compare it with the Python
 * engine position by position.
 */
"use strict";

const SkyjoTable = (function () {
  const HIDDEN = 0, REVEALED = 1, REMOVED = 2;

  function resolveRules(rules, presets) {
    const base = { column_clear: true, clear_on_final_reveal: true, finisher_penalty: "double_if_positive",
      next_round_starter: "finisher", end_score: 100, final_tie: "shared" };
    const given = rules || {};
    const preset = given.preset || "official";
    return Object.assign({}, base, (presets && presets[preset]) || {}, given);
  }

  function copyState(st) {
    return {
      round: st.round, done: st.done, values: st.values.map((v) => v.slice()),
      states: st.states.map((s) => s.slice()), discard: st.discard.slice(), drawSize: st.draw.length,
      hand: st.hand, handFrom: st.handFrom, totals: st.totals.slice(), over: st.over, raw: st.raw, scores: st.scores,
      last: st.last, cleared: st.cleared.slice(),
    };
  }

  function clearColumn(st, seat, col, rules) {
    if (!rules.column_clear) return false;
    const s = st.states[seat], v = st.values[seat];
    if (s[col] === REVEALED && s[col + 4] === REVEALED && s[col + 8] === REVEALED &&
        v[col] === v[col + 4] && v[col] === v[col + 8]) {
      s[col] = s[col + 4] = s[col + 8] = REMOVED;
      st.discard.push(v[col], v[col], v[col]);
      st.cleared.push([seat, col]);
      return true;
    }
    return false;
  }

  /* Every position of the game: positions[k][i] is round k after its first i actions. */
  function positions(record, presets) {
    const rules = resolveRules(record.rules, presets);
    const n = record.players.length;
    const out = [];
    const problems = [];
    let totals = new Array(n).fill(0);
    record.rounds.forEach((rnd, k) => {
      const deck = rnd.deck;
      const st = {
        round: k, done: 0, values: [], states: [], discard: [deck[12 * n]], draw: deck.slice(12 * n + 1),
        hand: null, handFrom: null, totals: totals.slice(), over: false, raw: null, scores: null, last: null,
        cleared: [],
      };
      for (let p = 0; p < n; p++) {
        st.values.push(deck.slice(12 * p, 12 * p + 12));
        st.states.push(new Array(12).fill(HIDDEN));
      }
      let reshuffles = 0;
      const list = [copyState(st)];
      rnd.actions.forEach((a, i) => {
        st.cleared = [];
        const seat = a.seat;
        if (a.act === "draw") {
          if (st.draw.length === 0) {
            const pile = (rnd.reshuffles || [])[reshuffles++];
            if (!pile) { problems.push(`round ${k + 1}, action ${i + 1}: the draw pile is empty and no reshuffle is listed`); }
            st.draw = (pile || []).slice();
            st.discard = st.discard.slice(-1);
          }
          st.hand = st.draw.shift();
          st.handFrom = "draw";
        } else if (a.act === "take") {
          st.hand = st.discard.pop();
          st.handFrom = "discard";
        } else if (a.act === "swap") {
          const old = st.values[seat][a.pos];
          st.values[seat][a.pos] = st.hand;
          st.states[seat][a.pos] = REVEALED;
          st.discard.push(old);
          st.hand = null; st.handFrom = null;
          clearColumn(st, seat, a.pos % 4, rules);
        } else if (a.act === "reveal") {
          if (st.hand !== null) { st.discard.push(st.hand); st.hand = null; st.handFrom = null; }
          st.states[seat][a.pos] = REVEALED;
          clearColumn(st, seat, a.pos % 4, rules);
        }
        st.done = i + 1;
        st.last = a;
        if (i === rnd.actions.length - 1) {
          st.cleared = [];
          for (let p = 0; p < n; p++) {
            for (let pos = 0; pos < 12; pos++) if (st.states[p][pos] === HIDDEN) st.states[p][pos] = REVEALED;
            if (rules.column_clear && rules.clear_on_final_reveal) for (let c = 0; c < 4; c++) clearColumn(st, p, c, rules);
          }
          st.raw = st.values.map((v, p) => v.reduce((sum, x, pos) => sum + (st.states[p][pos] === REVEALED ? x : 0), 0));
          const result = rnd.result || {};
          st.scores = result.scores || st.raw;
          if (JSON.stringify(result.raw) !== JSON.stringify(st.raw)) {
            problems.push(`round ${k + 1}: the viewer counts ${JSON.stringify(st.raw)}, the record says ${JSON.stringify(result.raw)}`);
          }
          totals = totals.map((t, p) => t + st.scores[p]);
          st.totals = totals.slice();
          st.over = true;
        }
        list.push(copyState(st));
      });
      out.push(list);
    });
    return { rules: rules, positions: out, problems: problems, totals: totals };
  }

  /* The decision due at a position, and what was legal (the record's next action is the choice). */
  function decisionAt(record, pos) {
    const rnd = record.rounds[pos.round];
    const next = rnd.actions[pos.done];
    if (!next) return null;
    const n = record.players.length;
    const seat = next.seat;
    const states = pos.states[seat];
    const hidden = [], open = [];
    for (let p = 0; p < 12; p++) {
      if (states[p] === HIDDEN) hidden.push(p);
      if (states[p] !== REMOVED) open.push(p);
    }
    let kind, legal;
    if (pos.done < 2 * n) {
      kind = "opening_reveal"; legal = hidden.map((p) => ({ act: "reveal", pos: p }));
    } else if (pos.hand === null) {
      kind = "draw_or_take"; legal = [{ act: "draw" }, { act: "take" }];
    } else if (pos.handFrom === "discard") {
      kind = "swap_after_take"; legal = open.map((p) => ({ act: "swap", pos: p }));
    } else {
      kind = "swap_or_reveal";
      legal = open.map((p) => ({ act: "swap", pos: p })).concat(hidden.map((p) => ({ act: "reveal", pos: p })));
    }
    return { seat: seat, kind: kind, legal: legal, chosen: next };
  }

  return { positions: positions, decisionAt: decisionAt, resolveRules: resolveRules, HIDDEN: HIDDEN,
    REVEALED: REVEALED, REMOVED: REMOVED };
})();

if (typeof module !== "undefined") module.exports = SkyjoTable;
