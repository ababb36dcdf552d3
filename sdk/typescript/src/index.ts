/**
 * The Skyjo bot SDK for TypeScript: implement `decide(view)`, hand the bot to `run`.
 *
 *   import { Action, DecisionKind, run, type Bot, type View } from '@skyjo/sdk';
 *   const bot: Bot = { name: 'mybot', decide: (view: View) => view.legalActions[0]! };
 *   await run(bot);
 */

export * from './types.js';
export { type Bot, bot } from './bot.js';
export { BotClient, type ClientOptions, ConnectionLost, SessionRefused, type Stats, statusName } from './client.js';
export { checkAddress, clientTls, type ClientTls, UsageError } from './connection.js';
export { PROTOCOL_VERSION, ProtocolError, viewFromRequest, gameStartFromProto } from './convert.js';
export { Logger, LogLevel } from './log.js';
export { parseCommandLine, run, STOP_DEADLINE_MS } from './run.js';
