/**
 * `run(bot)`: the whole life of a bot process, as the referee starts it.
 *
 * Reads the command line (`--addr`, `--token`, `--ca-file`, `--client-cert`, `--client-key`, `--name`,
 * `--give-up SECONDS`, `-v`/`-vv`) over the environment (SKYJO_ADDR, SKYJO_TOKEN, SKYJO_CA_FILE, ...), plays
 * until the session ends and exits with the documented code:
 *
 *   0  the referee ended the session, or SIGTERM/SIGINT, or the parent (SKYJO_PARENT_PID) died
 *   1  the referee refused the session (token, protocol, replaced) or could not be reached (gave up)
 *   2  bad usage: no address or token, a malformed address, a TLS file that cannot be used, an unknown option
 *
 * A signal closes the session; if that has not finished within STOP_DEADLINE_MS the process exits at once
 * with status 0. (JavaScript runs one thing at a time: a `decide` that blocks the event loop delays the
 * signal's handling until it returns; an async `decide` that awaits does not.)
 */

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import type { Bot } from './bot.js';
import { BotClient, type ClientOptions, ConnectionLost, SessionRefused, type Stats } from './client.js';
import { UsageError } from './connection.js';
import { Logger, LogLevel } from './log.js';

/** After SIGINT/SIGTERM the process exits by itself if the clean stop takes longer than this. */
export const STOP_DEADLINE_MS = 750;

/** How often the parent is checked when SKYJO_PARENT_PID is set (Node has no pidfd to wait on). */
const PARENT_CHECK_MS = 200;

export const USAGE = `usage: node dist/bot.js [options]   (SKYJO_ADDR and SKYJO_TOKEN come from the referee)
  --addr HOST:PORT|unix:PATH  the referee (default: $SKYJO_ADDR)
  --token TOKEN               the bot's token (default: $SKYJO_TOKEN)
  --ca-file PEM               speak TLS, trusting this CA (default: $SKYJO_CA_FILE)
  --client-cert PEM           this bot's certificate, for mutual TLS (default: $SKYJO_CLIENT_CERT)
  --client-key PEM            its key (default: $SKYJO_CLIENT_KEY)
  --name NAME                 the name sent in Hello (default: the bot's name)
  --give-up SECONDS           stop reconnecting after this long without a session (default 60)
  -v, -vv                     log connections and strikes; every message (on stderr)`;

/** Client options from the command line; UsageError names a bad one. */
export function parseCommandLine(argv: readonly string[]): ClientOptions & { verbosity: number } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        addr: { type: 'string' },
        token: { type: 'string' },
        'ca-file': { type: 'string' },
        'client-cert': { type: 'string' },
        'client-key': { type: 'string' },
        name: { type: 'string' },
        'give-up': { type: 'string' },
        verbose: { type: 'boolean', short: 'v', multiple: true },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const values = parsed.values;
  let giveUpAfterMs: number | undefined;
  if (values['give-up'] !== undefined) {
    const seconds = Number(values['give-up']);
    if (!Number.isFinite(seconds) || seconds < 0) {
      throw new UsageError(`--give-up ${values['give-up']}: expected a number of seconds >= 0`);
    }
    giveUpAfterMs = seconds * 1000;
  }
  return {
    addr: values.addr,
    token: values.token,
    caFile: values['ca-file'],
    clientCert: values['client-cert'],
    clientKey: values['client-key'],
    name: values.name,
    giveUpAfterMs,
    verbosity: values.verbose?.length ?? 0,
  };
}

/** Whether `pid` is our parent, or its parent and so on (a bot started through a shell). */
export function isAncestor(pid: number): boolean {
  let current = liveParent();
  for (let i = 0; i < 64; i++) {
    if (current === pid) return true;
    if (current <= 1) return false;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
      current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}

/** The current parent pid (Node caches process.ppid at start; /proc has the live one). */
function liveParent(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return process.ppid;
  }
}

/** Calls `onGone` once `parentPid` is no longer an ancestor of this process (checked every 0.2 s). */
export function watchParent(parentPid: number, onGone: () => void): void {
  const chain = (): boolean => isAncestor(parentPid);
  if (!chain()) {
    onGone();
    return;
  }
  const timer = setInterval(() => {
    if (!chain()) {
      clearInterval(timer);
      onGone();
    }
  }, PARENT_CHECK_MS);
  timer.unref();
}

/**
 * Plays `bot` until the session ends, then exits the process with the documented code (never returns).
 * `argv` defaults to the process's own arguments; `options` override both.
 */
export async function run(bot: Bot, options: ClientOptions = {}, argv = process.argv.slice(2)): Promise<never> {
  let client: BotClient;
  const logger = options.logger ?? new Logger();
  try {
    const cli = parseCommandLine(argv);
    logger.level = [LogLevel.WARN, LogLevel.INFO, LogLevel.DEBUG][Math.min(cli.verbosity, 2)]!;
    const merged: ClientOptions = { logger };
    for (const [key, value] of Object.entries({ ...cli, ...options })) {
      if (value !== undefined && key !== 'verbosity') (merged as Record<string, unknown>)[key] = value;
    }
    client = new BotClient(bot, merged);
  } catch (err) {
    if (err instanceof UsageError) return exit(2, `error: ${err.message}`);
    throw err;
  }
  const stop = (why: string): void => {
    logger.info(`${why}: closing the session`);
    client.stop();
    setTimeout(() => {
      logger.warn(`${why}: the session did not close within ${STOP_DEADLINE_MS / 1000} s; exiting now`);
      process.exit(0);
    }, STOP_DEADLINE_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const parent = Number(process.env.SKYJO_PARENT_PID || 0);
  if (Number.isInteger(parent) && parent > 0) watchParent(parent, () => stop('the parent process exited'));
  try {
    await client.run();
  } catch (err) {
    if (err instanceof SessionRefused || err instanceof ConnectionLost) return exit(1, `error: ${err.message}`);
    throw err;
  }
  logger.info(summary(client.stats));
  return exit(0);
}

function summary(stats: Stats): string {
  return (
    `played ${stats.games} games, ${stats.decisions} decisions ` +
    `(${stats.decideErrors} decide errors, ${stats.strikes} strikes)`
  );
}

function exit(code: number, message?: string): never {
  if (message !== undefined) process.stderr.write(`${message}\n`);
  process.exit(code);
}
