/**
 * The vocabulary a bot sees: actions, rules, the per-seat view, events and game results.
 *
 * The same names as the Python SDK's `skyjo_bot.types` (in camelCase), pure data that knows nothing of gRPC.
 * Grid positions are numbered row-major, `pos = 4*row + col` (rows 0-2, columns 0-3); column `c` is
 * positions `c, c+4, c+8`.
 */

export const ROWS = 3;
export const COLUMNS = 4;
export const GRID_SIZE = ROWS * COLUMNS;

/** How many cards of each value the 150-card deck holds. */
export const DECK_COUNTS: ReadonlyMap<number, number> = new Map([
  [-2, 5],
  [-1, 10],
  [0, 15],
  ...Array.from({ length: 12 }, (_, i): [number, number] => [i + 1, 10]),
]);

/** The three grid positions of `column` (0-3), top to bottom. */
export function columnPositions(column: number): [number, number, number] {
  return [column, column + COLUMNS, column + 2 * COLUMNS];
}

/** A string or value that does not spell an action. */
export class InvalidActionError extends Error {
  override name = 'InvalidActionError';
}

// ------------------------------------------------------------------------------------------ actions

/** The action vocabulary of `skyjo-game/1`. */
export const ActionKind = { REVEAL: 'reveal', DRAW: 'draw', TAKE: 'take', SWAP: 'swap' } as const;
export type ActionKind = (typeof ActionKind)[keyof typeof ActionKind];
const ACTION_KINDS: readonly string[] = Object.values(ActionKind);

/**
 * One action, as in a game record: `reveal` and `swap` take a position.
 *
 * Actions are interned: `Action.swap(3) === Action.swap(3)`, so `===` and `includes` compare them.
 * `toString()` is the text form `Action.parse` reads (`"swap 3"`).
 */
export class Action {
  private static readonly interned = new Map<string, Action>();

  private constructor(
    readonly kind: ActionKind,
    readonly pos: number | null,
  ) {
    Object.freeze(this);
  }

  /** The action `kind` (with `pos` for reveal and swap); throws InvalidActionError when it is not one. */
  static of(kind: string, pos: number | null = null): Action {
    if (!ACTION_KINDS.includes(kind)) {
      throw new InvalidActionError(`unknown action ${JSON.stringify(kind)}: expected one of reveal, draw, take, swap`);
    }
    if (kind === 'reveal' || kind === 'swap') {
      if (!Number.isInteger(pos) || (pos as number) < 0 || (pos as number) >= GRID_SIZE) {
        throw new InvalidActionError(`${kind} needs a position 0-11 (pos = 4*row + col), got ${String(pos)}`);
      }
    } else if (pos !== null) {
      throw new InvalidActionError(`${kind} takes no position, got ${String(pos)}`);
    }
    const key = `${kind} ${pos ?? ''}`;
    let found = Action.interned.get(key);
    if (found === undefined) {
      found = new Action(kind as ActionKind, pos);
      Action.interned.set(key, found);
    }
    return found;
  }

  static reveal(pos: number): Action {
    return Action.of('reveal', pos);
  }

  static swap(pos: number): Action {
    return Action.of('swap', pos);
  }

  static draw(): Action {
    return Action.of('draw');
  }

  static take(): Action {
    return Action.of('take');
  }

  /** Reads `"draw"`, `"take"`, `"reveal 5"` or `"swap 11"`. */
  static parse(text: string): Action {
    const words = text.trim().split(/\s+/).filter((w) => w !== '');
    if (words.length === 0 || words.length > 2) {
      throw new InvalidActionError(
        `cannot read action ${JSON.stringify(text)}: expected 'draw', 'take', 'reveal POS' or 'swap POS'`,
      );
    }
    let pos: number | null = null;
    if (words.length === 2) {
      if (!/^[+-]?\d+$/.test(words[1]!)) {
        throw new InvalidActionError(
          `cannot read action ${JSON.stringify(text)}: position ${JSON.stringify(words[1])} is not a number 0-11`,
        );
      }
      pos = Number(words[1]);
    }
    return Action.of(words[0]!.toLowerCase(), pos);
  }

  toString(): string {
    return this.pos === null ? this.kind : `${this.kind} ${this.pos}`;
  }

  toJSON(): { act: ActionKind; pos?: number } {
    return this.pos === null ? { act: this.kind } : { act: this.kind, pos: this.pos };
  }
}

// -------------------------------------------------------------------------------------------- rules

export const FinisherPenalty = { DOUBLE_IF_POSITIVE: 'double_if_positive', DOUBLE: 'double', PLUS_10: 'plus_10' } as const;
export type FinisherPenalty = (typeof FinisherPenalty)[keyof typeof FinisherPenalty];

export const NextRoundStarter = {
  FINISHER: 'finisher',
  ROUND_WINNER: 'round_winner',
  HIGHEST_REVEAL: 'highest_reveal',
} as const;
export type NextRoundStarter = (typeof NextRoundStarter)[keyof typeof NextRoundStarter];

export const FinalTie = { SHARED: 'shared', EXTRA_ROUND: 'extra_round' } as const;
export type FinalTie = (typeof FinalTie)[keyof typeof FinalTie];

/** The rules in force in a game (docs/rules.md), as GameStart reports them: every option set. */
export interface Rules {
  readonly preset: string;
  readonly columnClear: boolean;
  readonly clearOnFinalReveal: boolean;
  readonly finisherPenalty: FinisherPenalty;
  readonly nextRoundStarter: NextRoundStarter;
  readonly endScore: number;
  readonly finalTie: FinalTie;
}

/** The publisher's rules. */
export const OFFICIAL_RULES: Rules = Object.freeze({
  preset: 'official',
  columnClear: true,
  clearOnFinalReveal: true,
  finisherPenalty: FinisherPenalty.DOUBLE_IF_POSITIVE,
  nextRoundStarter: NextRoundStarter.FINISHER,
  endScore: 100,
  finalTie: FinalTie.SHARED,
});

/** How long a seat may think and how many faults it may make in one game (0: no limit, never, no grace). */
export interface TimeControl {
  readonly decisionMs: number;
  readonly bankMs: number;
  readonly maxStrikes: number;
  readonly graceMs: number;
}

// --------------------------------------------------------------------------------------------- view

/** Which decision is due: the four moments a player chooses something. */
export const DecisionKind = {
  /** reveal one of two opening cards */
  OPENING_REVEAL: 'opening_reveal',
  /** the start of a turn */
  DRAW_OR_TAKE: 'draw_or_take',
  /** after drawing: swap the drawn card, or discard it and reveal a hidden one */
  SWAP_OR_REVEAL: 'swap_or_reveal',
  /** after taking the discard: place it */
  SWAP_AFTER_TAKE: 'swap_after_take',
} as const;
export type DecisionKind = (typeof DecisionKind)[keyof typeof DecisionKind];

export const SlotState = { HIDDEN: 'hidden', REVEALED: 'revealed', REMOVED: 'removed' } as const;
export type SlotState = (typeof SlotState)[keyof typeof SlotState];

/** One player's 12 slots as everyone sees them: a hidden slot's value is `null`. */
export class Grid {
  constructor(
    readonly states: readonly SlotState[],
    /** the value of each revealed slot, else null */
    readonly values: readonly (number | null)[],
  ) {
    Object.freeze(this);
  }

  /** Hidden positions, ascending. */
  hiddenPositions(): number[] {
    return this.positions((s) => s === SlotState.HIDDEN);
  }

  /** Revealed positions, ascending. */
  revealedPositions(): number[] {
    return this.positions((s) => s === SlotState.REVEALED);
  }

  /** Positions that are not removed (hidden or revealed), ascending. */
  openPositions(): number[] {
    return this.positions((s) => s !== SlotState.REMOVED);
  }

  revealedSum(): number {
    return this.values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  }

  /** The values of `column` (0-3), top to bottom; null where hidden or removed. */
  column(column: number): [number | null, number | null, number | null] {
    const [a, b, c] = columnPositions(column);
    return [this.values[a] ?? null, this.values[b] ?? null, this.values[c] ?? null];
  }

  /** Three text lines, `?` for hidden and `.` for removed slots. */
  render(): string {
    const cell = (p: number): string =>
      this.states[p] === SlotState.HIDDEN ? '?' : this.states[p] === SlotState.REMOVED ? '.' : String(this.values[p]);
    const rows: string[] = [];
    for (let r = 0; r < ROWS; r++) {
      rows.push(Array.from({ length: COLUMNS }, (_, c) => cell(4 * r + c).padStart(3)).join(' '));
    }
    return rows.join('\n');
  }

  private positions(keep: (state: SlotState) => boolean): number[] {
    const out: number[] = [];
    this.states.forEach((state, pos) => {
      if (keep(state)) out.push(pos);
    });
    return out;
  }
}

/** The fields of a View, for building one. */
export interface ViewFields {
  readonly gameId: string;
  readonly requestId: bigint;
  readonly seat: number;
  readonly players: readonly string[];
  readonly rules: Rules;
  readonly timeControl: TimeControl | null;
  readonly round: number;
  readonly decision: DecisionKind;
  readonly grids: readonly Grid[];
  readonly discardPile: readonly number[];
  readonly drawPileSize: number;
  readonly hand: number | null;
  readonly totals: readonly number[];
  readonly roundScores: readonly (readonly number[])[];
  readonly finisher: number | null;
  readonly starter: number | null;
  readonly legalActions: readonly Action[];
  readonly timeLeftMs: number;
}

/**
 * Everything one seat may know when a decision is due: the bot's whole world.
 *
 * Never a hidden value or the draw pile's order. `legalActions` lists what may be played now.
 */
export class View implements ViewFields {
  readonly gameId!: string;
  /** the request this view answers (uint64, exact) */
  readonly requestId!: bigint;
  /** your seat (0-based): it is your turn */
  readonly seat!: number;
  /** names in seat order, from GameStart */
  readonly players!: readonly string[];
  readonly rules!: Rules;
  readonly timeControl!: TimeControl | null;
  /** the round, counted from 0 */
  readonly round!: number;
  readonly decision!: DecisionKind;
  /** one grid per seat */
  readonly grids!: readonly Grid[];
  /** bottom first; the top card is the last */
  readonly discardPile!: readonly number[];
  readonly drawPileSize!: number;
  /** the card drawn or taken, when a swap decision is due */
  readonly hand!: number | null;
  /** game totals before this round */
  readonly totals!: readonly number[];
  /** scores of finished rounds, one list per round */
  readonly roundScores!: readonly (readonly number[])[];
  /** the seat that ended the round, once someone has */
  readonly finisher!: number | null;
  /** who starts (started) this round's turns; null during opening reveals */
  readonly starter!: number | null;
  readonly legalActions!: readonly Action[];
  /** your time for this answer, in ms */
  readonly timeLeftMs!: number;

  constructor(fields: ViewFields) {
    Object.assign(this, fields);
    Object.freeze(this);
  }

  get numPlayers(): number {
    return this.grids.length;
  }

  get myGrid(): Grid {
    return this.grids[this.seat]!;
  }

  get discardTop(): number | null {
    return this.discardPile.length > 0 ? this.discardPile[this.discardPile.length - 1]! : null;
  }

  /** Whether `action` may be played now. */
  isLegal(action: Action): boolean {
    return this.legalActions.includes(action);
  }

  /** The multiset of cards this seat cannot see (hidden slots plus the draw pile): value -> count. */
  unseenCards(): Map<number, number> {
    const unseen = new Map(DECK_COUNTS);
    const see = (v: number | null): void => {
      if (v !== null) unseen.set(v, (unseen.get(v) ?? 0) - 1);
    };
    this.discardPile.forEach(see);
    for (const grid of this.grids) grid.values.forEach(see);
    see(this.hand);
    return unseen;
  }

  /** The average of the unseen cards: the expected value of any hidden card. */
  expectedHiddenValue(): number {
    let count = 0;
    let sum = 0;
    for (const [value, n] of this.unseenCards()) {
      count += n;
      sum += value * n;
    }
    return count > 0 ? sum / count : 0;
  }
}

// ------------------------------------------------------------------------------------------- events

/** Public events: everything that happens at the table, as every seat sees it. */
export const EventKind = {
  ROUND_START: 'round_start',
  REVEAL: 'reveal',
  DRAW: 'draw',
  TAKE: 'take',
  DISCARD: 'discard',
  SWAP: 'swap',
  COLUMN_CLEARED: 'column_cleared',
  RESHUFFLE: 'reshuffle',
  TURNS_START: 'turns_start',
  ROUND_FINISHING: 'round_finishing',
  FINAL_REVEAL: 'final_reveal',
  ROUND_END: 'round_end',
  GAME_END: 'game_end',
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

/** One public event; only the fields its kind uses are set (see docs/writing-a-bot.md, Events). */
export interface Event {
  readonly kind: EventKind;
  readonly seat?: number;
  readonly pos?: number;
  readonly value?: number;
  readonly replaced?: number;
  readonly round?: number;
  /** round_end: scores before the finisher penalty, after it, and game totals after the round */
  readonly raw?: readonly number[];
  readonly scores?: readonly number[];
  readonly totals?: readonly number[];
  /** game_end */
  readonly ranks?: readonly number[];
  readonly winners?: readonly number[];
}

// ---------------------------------------------------------------------------- game start and end

/** Sent to every seat when a game begins. */
export interface GameStart {
  readonly gameId: string;
  readonly seat: number;
  readonly players: readonly string[];
  readonly rules: Rules;
  readonly timeControl: TimeControl | null;
}

/** The end of a round: scores per seat. */
export interface RoundResult {
  readonly gameId: string;
  readonly round: number;
  readonly finisher: number;
  /** before the finisher penalty */
  readonly raw: readonly number[];
  readonly scores: readonly number[];
  /** game totals after this round */
  readonly totals: readonly number[];
}

/** Sent to every seat when a game is over (lower totals are better; rank 1 is best). */
export interface GameResult {
  readonly gameId: string;
  readonly totals: readonly number[];
  readonly ranks: readonly number[];
  readonly winners: readonly number[];
  readonly forfeits: readonly number[];
}

/** The referee played for this seat because its answer (or silence) was at fault. */
export interface Strike {
  readonly gameId: string;
  /** 0 when the fault was not an answer to a request */
  readonly requestId: bigint;
  /** "timeout", "illegal" or "malformed" */
  readonly reason: string;
  /** what was wrong and what was expected */
  readonly detail: string;
  /** what the referee played instead, if anything */
  readonly played: Action | null;
  /** this seat's strikes in this game, this one included */
  readonly strikes: number;
  readonly maxStrikes: number;
}
