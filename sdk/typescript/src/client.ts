/**
 * Plays a Bot on a skyjo-ref referee: one `BotService.Play` stream (gRPC over HTTP/2, by
 * @connectrpc/connect-node), game after game, as docs/writing-a-bot.md asks.
 *
 * - Hello first, with the protocol version; every DecisionRequest answered with its request id (by index into
 *   its legal actions); events (batched or carried by a request) handed to the bot before the decision.
 * - A dropped stream is reopened with the same token, with exponential backoff and jitter (0.1 s doubling to 5 s,
 *   times 0.5-1), giving up after `giveUpAfterMs` without a session. The referee then sends the pending decision
 *   again with the same request id: the client answers it from the answer it already computed, without a second
 *   `decide` call.
 * - A `decide` that throws becomes `DecisionReply.error` with its text; the session goes on.
 * - A refused session (bad token, replaced by another stream, unsupported protocol) throws SessionRefused;
 *   giving up throws ConnectionLost; the referee ending the session (status OK) or `stop()` returns.
 * - Keepalive: a PING every 30 s on an open stream with no data (the referee allows one per 10 s), 10 s to answer.
 */

import { equals } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Bot } from './bot.js';
import { checkAddress, clientTls, type ClientTls, endpoint, type TlsFiles, UsageError } from './connection.js';
import * as convert from './convert.js';
import * as pb from './gen/skyjo/v1/skyjo_pb.js';
import { Logger } from './log.js';
import { Action, type GameStart, type View } from './types.js';

/** The referee refused or ended the session for good (bad token, replaced, unsupported protocol). */
export class SessionRefused extends Error {
  override name = 'SessionRefused';
}

/** No session could be (re)established within the give-up time. */
export class ConnectionLost extends Error {
  override name = 'ConnectionLost';
}

export interface ClientOptions extends TlsFiles {
  /** HOST:PORT or unix:PATH (default: $SKYJO_ADDR) */
  addr?: string | undefined;
  /** the bot's token (default: $SKYJO_TOKEN) */
  token?: string | undefined;
  /** the name sent in Hello (default: bot.name) */
  name?: string | undefined;
  /** the version sent in Hello (default: bot.version) */
  version?: string | undefined;
  /** stop reconnecting after this long without a session (default 60 s) */
  giveUpAfterMs?: number | undefined;
  backoffBaseMs?: number | undefined;
  backoffMaxMs?: number | undefined;
  /** keepalive PING interval on an open stream without traffic (default 30 s; the referee allows >= 10 s) */
  keepaliveMs?: number | undefined;
  logger?: Logger | undefined;
}

/** What a client did, for logs and tests. */
export interface Stats {
  games: number;
  decisions: number;
  decideErrors: number;
  strikes: number;
  /** streams that got a Welcome (1 + reconnects) */
  sessions: number;
}

/** Statuses after which reconnecting cannot help. */
const FATAL = new Map<Code, string>([
  [Code.Unauthenticated, 'the referee refused the token'],
  [Code.PermissionDenied, 'the referee refused the token'],
  [Code.InvalidArgument, 'the referee refused the session'],
  [Code.FailedPrecondition, 'the referee refused the session'],
  [Code.Unimplemented, 'the server at this address is not a skyjo-ref referee'],
  [Code.Aborted, 'another connection with the same token replaced this one'],
]);

/** gRPC's names of the status codes (Connect spells them in CamelCase). */
export function statusName(code: Code): string {
  if (code === Code.Canceled) return 'CANCELLED';
  return (Code[code] ?? `STATUS_${code}`).replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

/**
 * Whether `error` is this process's own view of a broken connection (a reset socket, a destroyed stream),
 * not a status the referee sent: connect-node reports some of those as ABORTED, which from the referee
 * means "replaced by another stream" and ends the bot. Such errors carry the Node.js error as their cause.
 */
function brokeHere(error: ConnectError): boolean {
  for (let cause: unknown = error.cause, depth = 0; cause instanceof Error && depth < 8; depth++) {
    if (typeof (cause as NodeJS.ErrnoException).code === 'string') return true;
    cause = cause.cause;
  }
  return false;
}

/** The requests of one stream, as the async iterable connect-node sends from. */
class Outbox implements AsyncIterable<pb.PlayRequest> {
  private readonly items: pb.PlayRequest[] = [];
  private waiting: ((result: IteratorResult<pb.PlayRequest>) => void) | null = null;
  private closed = false;

  push(item: pb.PlayRequest): void {
    if (this.closed) return;
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  close(): void {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<pb.PlayRequest> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
      throw: (err: unknown) => {
        this.close();
        return Promise.reject(err);
      },
    };
  }
}

/** The SDK's own folder: a stack frame in it is not the bot's line to blame. */
const SDK_DIR = dirname(fileURLToPath(import.meta.url));

/** ` (at /path/src/bot.ts:12)`: the bot's innermost stack frame outside the SDK, so the referee can show it. */
export function raisedAt(err: unknown): string {
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  for (const line of stack.split('\n').slice(1)) {
    const match = /(?:\(|at )((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?$/.exec(line.trim());
    if (match === null) continue;
    const file = match[1]!.startsWith('file://') ? fileURLToPath(match[1]!) : match[1]!;
    const inSdk = file.startsWith(SDK_DIR + sep) && !file.startsWith(join(SDK_DIR, 'tests') + sep);
    if (inSdk || file.includes(`${sep}node_modules${sep}`)) continue;
    return ` (at ${original(file, Number(match[2]), Number(match[3]))})`;
  }
  return '';
}

/** `file:line`, through the compiler's source map beside `file` when there is one (dist/bot.js -> src/bot.ts). */
function original(file: string, line: number, column: number): string {
  try {
    const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    const entry = map.findEntry(line - 1, column - 1) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource !== undefined && entry.originalLine !== undefined) {
      const source = entry.originalSource.startsWith('file://')
        ? fileURLToPath(entry.originalSource)
        : resolve(dirname(file), entry.originalSource);
      return `${source}:${entry.originalLine + 1}`;
    }
  } catch {
    // no map, or not one we can read: the compiled file's line
  }
  return `${file}:${line}`;
}

function describe(view: View): string {
  return (
    `round ${view.round}, seat ${view.seat}, ${view.decision}, hand ${view.hand ?? 'none'}, ` +
    `legal: ${view.legalActions.map(String).join(', ')}`
  );
}

export class BotClient {
  readonly addr: string;
  readonly stats: Stats = { games: 0, decisions: 0, decideErrors: 0, strikes: 0, sessions: 0 };
  /** the name the referee knows the token by, once welcomed */
  seatName = '';
  /** resolves once the referee has answered Hello (a session holds) */
  readonly welcomed: Promise<void>;

  private readonly token: string;
  private readonly tls: ClientTls | null;
  private readonly name: string;
  private readonly version: string;
  private readonly giveUpAfterMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly keepaliveMs: number;
  private readonly log: Logger;
  private readonly games = new Map<string, GameStart>();
  /** "request id|game id" -> the request and the reply computed (or being computed), kept for re-sent requests */
  private readonly answers = new Map<string, { request: pb.DecisionRequest; reply: Promise<pb.PlayRequest> }>();
  private latestRequest = 0n;
  private struck = new Set<bigint>();
  private stopping = false;
  private session: AbortController | null = null;
  private wakeBackoff: (() => void) | null = null;
  private markWelcomed: () => void = () => undefined;

  /** Throws UsageError for a missing or malformed address or token, or a TLS file that cannot be used. */
  constructor(
    readonly bot: Bot,
    options: ClientOptions = {},
  ) {
    const addr = options.addr || process.env.SKYJO_ADDR || '';
    const token = options.token || process.env.SKYJO_TOKEN || '';
    if (!addr) throw new UsageError('no referee address: pass --addr HOST:PORT or set SKYJO_ADDR');
    if (!token) throw new UsageError('no bot token: pass --token TOKEN or set SKYJO_TOKEN (skyjo-ref serve issues tokens)');
    this.addr = checkAddress(addr);
    const tls = clientTls(options);
    this.tls = this.addr.startsWith('unix:') ? null : tls;
    this.token = token;
    this.name = options.name || bot.name || 'typescript-bot';
    this.version = options.version ?? bot.version ?? '';
    this.giveUpAfterMs = options.giveUpAfterMs ?? 60_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 100;
    this.backoffMaxMs = options.backoffMaxMs ?? 5_000;
    this.keepaliveMs = options.keepaliveMs ?? 30_000;
    this.log = options.logger ?? new Logger();
    this.welcomed = new Promise((resolve) => {
      this.markWelcomed = resolve;
    });
  }

  /** Ends `run()`: the stream is cancelled (or the backoff pause cut short) and run resolves. */
  stop(): void {
    this.stopping = true;
    this.session?.abort();
    this.wakeBackoff?.();
  }

  /** Plays until the referee ends the session or `stop()` is called. */
  async run(): Promise<void> {
    let attempt = 0;
    let lostSince = Date.now();
    while (!this.stopping) {
      const welcomedBefore = this.stats.sessions;
      const outcome = await this.oneSession();
      if (outcome === 'closed' || this.stopping) return;
      if (this.stats.sessions > welcomedBefore) {
        attempt = 0;
        lostSince = Date.now();
      }
      const waited = Date.now() - lostSince;
      if (waited > this.giveUpAfterMs) {
        throw new ConnectionLost(
          `no session with the referee at ${this.addr} for ${Math.round(waited / 1000)} s (${outcome}): giving up` +
            this.closedHint(outcome),
        );
      }
      const delay = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      attempt += 1;
      this.log.warn(`stream to ${this.addr} lost (${outcome}); reconnecting in ${(delay / 1000).toFixed(2)} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeBackoff = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeBackoff = null;
    }
  }

  private closedHint(outcome: string): string {
    if (!/socket hang up|ECONNRESET|closed|handshake|EPIPE/i.test(outcome)) return '';
    if (this.tls === null) {
      return '; the referee closed the connection at once: if it serves TLS, set SKYJO_CA_FILE (--ca-file) to its CA';
    }
    if (this.tls.cert === null) {
      return '; the referee closed the connection at once: if it asks for client certificates, set SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY';
    }
    return '';
  }

  /** One Play stream until it ends: `"closed"` (status OK), `"stopped"`, or why it broke; throws when fatal. */
  private async oneSession(): Promise<string> {
    const { baseUrl, options } = endpoint(this.addr, this.tls);
    const manager = new Http2SessionManager(
      baseUrl,
      { pingIntervalMs: this.keepaliveMs, pingTimeoutMs: 10_000, pingIdleConnection: false },
      options,
    );
    const transport = createGrpcTransport({
      baseUrl,
      sessionManager: manager,
      readMaxBytes: 1 << 20,
      writeMaxBytes: 64 << 10,
    });
    const client = createClient(pb.BotService, transport);
    const outbox = new Outbox();
    const abort = new AbortController();
    this.session = abort;
    // request ids grow within one referee's life; a restarted referee starts again
    this.latestRequest = 0n;
    this.struck = new Set();
    try {
      outbox.push(convert.hello(this.name, this.version));
      this.log.debug(`-> hello name=${this.name} version=${this.version}`);
      const responses = client.play(outbox, {
        signal: abort.signal,
        headers: { authorization: `Bearer ${this.token}` },
      });
      for await (const msg of responses) {
        await this.handle(msg, outbox);
      }
      this.log.info('the referee ended the session');
      return 'closed';
    } catch (err) {
      if (this.stopping) return 'stopped';
      const error = ConnectError.from(err);
      if (brokeHere(error)) return `connection broke: ${error.rawMessage}`; // never the referee's status
      const fatal = FATAL.get(error.code);
      if (fatal !== undefined) {
        throw new SessionRefused(`${fatal}: ${statusName(error.code)}: ${error.rawMessage}`);
      }
      return `${statusName(error.code)}: ${error.rawMessage}`;
    } finally {
      this.session = null;
      outbox.close();
      abort.abort();
      manager.abort();
    }
  }

  private async handle(msg: pb.PlayResponse, outbox: Outbox): Promise<void> {
    const message = msg.message;
    if (this.log.enabled(3)) this.log.debug(`<- ${message.case ?? 'unknown'}`);
    switch (message.case) {
      case 'decision': {
        const request = message.value;
        if (request.requestId > this.latestRequest) this.latestRequest = request.requestId;
        this.deliverEvents(request.events);
        await this.answer(request, outbox);
        return;
      }
      case 'events':
        this.deliverEvents(message.value.events);
        return;
      case 'gameStart': {
        const start = convert.gameStartFromProto(message.value);
        if (!this.games.has(start.gameId)) {
          // a GameStart sent again after a reconnect is not news
          this.games.set(start.gameId, start);
          this.hook('onGameStart', () => this.bot.onGameStart?.(start));
        }
        return;
      }
      case 'roundResult': {
        const result = convert.roundResultFromProto(message.value);
        if (this.bot.onEvent) this.hook('onEvent', () => this.bot.onEvent?.(convert.roundEndEvent(result)));
        this.hook('onRoundResult', () => this.bot.onRoundResult?.(result));
        return;
      }
      case 'gameOver': {
        const result = convert.gameOverFromProto(message.value);
        this.games.delete(result.gameId);
        this.stats.games += 1;
        if (this.bot.onEvent) this.hook('onEvent', () => this.bot.onEvent?.(convert.gameEndEvent(result)));
        this.hook('onGameOver', () => this.bot.onGameOver?.(result));
        return;
      }
      case 'strike': {
        const strike = convert.strikeFromProto(message.value);
        this.struck.add(strike.requestId);
        this.stats.strikes += 1;
        this.log.warn(
          `strike ${strike.strikes}/${strike.maxStrikes} in game ${strike.gameId} (request ${strike.requestId}, ` +
            `${strike.reason}): ${strike.detail}; the referee played ${strike.played ?? 'nothing'}`,
        );
        this.hook('onStrike', () => this.bot.onStrike?.(strike));
        return;
      }
      case 'welcome':
        this.seatName = message.value.seatName;
        this.stats.sessions += 1;
        this.markWelcomed();
        this.log.info(
          `connected to ${this.addr} as '${this.seatName}' (protocol ${message.value.protocolVersion})`,
        );
        return;
      default:
        this.log.debug('skipping a message this SDK does not know');
    }
  }

  private deliverEvents(events: readonly pb.Event[]): void {
    if (!this.bot.onEvent || events.length === 0) return; // converted only for bots that look at them
    for (const event of convert.eventsFromProto(events)) this.hook('onEvent', () => this.bot.onEvent?.(event));
  }

  /** Calls a bot hook; its errors are logged, never fatal. */
  private hook(name: string, call: () => void): void {
    try {
      call();
    } catch (err) {
      this.log.error(`${name} threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  }

  private async answer(request: pb.DecisionRequest, outbox: Outbox): Promise<void> {
    const rid = request.requestId;
    const key = `${rid}|${request.gameId}`;
    let known = this.answers.get(key);
    if (known !== undefined && !sameDecision(known.request, request)) known = undefined; // a restarted referee
    if (known === undefined) {
      known = { request, reply: this.decide(request) };
      this.answers.set(key, known);
      while (this.answers.size > 8) this.answers.delete(this.answers.keys().next().value!);
    } else {
      this.log.info(`decision ${rid} came again (a reconnect): sending the answer already computed`);
    }
    const message = await known.reply;
    if (this.struck.has(rid) || rid < this.latestRequest) {
      this.log.warn(`decision ${rid} came too late (the referee moved on); not sent`);
      return;
    }
    outbox.push(message);
    if (this.log.enabled(3)) this.log.debug(`-> reply ${rid} ${JSON.stringify(message.message.value, replacer)}`);
  }

  private async decide(request: pb.DecisionRequest): Promise<pb.PlayRequest> {
    const rid = request.requestId;
    let start = this.games.get(request.gameId);
    if (start === undefined) {
      this.log.warn(`decision ${rid} for game '${request.gameId}' that never started here; guessing players and rules`);
      const n = request.view?.grids.length ?? 0;
      start = convert.gameStartFromProto({
        gameId: request.gameId,
        seat: request.view?.seat ?? 0,
        players: Array.from({ length: n }, (_, i) => `seat ${i}`),
      } as pb.GameStart);
    }
    let view: View;
    try {
      view = convert.viewFromRequest(request, start);
    } catch (err) {
      this.log.error(`decision ${rid} is malformed: ${(err as Error).message}`);
      return convert.errorReply(rid, `the bot could not read the request: ${(err as Error).message}`);
    }
    this.stats.decisions += 1;
    let action: unknown;
    try {
      action = await this.bot.decide(view);
      if (!(action instanceof Action)) {
        throw new TypeError(`decide returned ${String(action)}, expected an Action (one of view.legalActions)`);
      }
    } catch (err) {
      this.stats.decideErrors += 1;
      const text = err instanceof Error ? `${err.name}: ${err.message}` : `thrown: ${String(err)}`;
      this.log.error(
        `decide threw on decision ${rid} (${describe(view)}): ${err instanceof Error ? (err.stack ?? text) : text}`,
      );
      return convert.errorReply(rid, `${text}${raisedAt(err)}`);
    }
    if (!view.isLegal(action)) {
      this.log.warn(`decide chose ${action}, which is not legal in decision ${rid} (${describe(view)})`);
    }
    return convert.replyTo(rid, action, view.legalActions);
  }
}

/**
 * Whether `again` (same id and game) is the decision `first` asked: the same view and legal actions, not
 * merely the same id (a restarted referee counts ids from 1 again). Compared only when an id comes again.
 */
function sameDecision(first: pb.DecisionRequest, again: pb.DecisionRequest): boolean {
  return (
    first.legalActions.length === again.legalActions.length &&
    (first.view === again.view ||
      (first.view !== undefined && again.view !== undefined && equals(pb.ViewSchema, first.view, again.view)))
  );
}

function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
