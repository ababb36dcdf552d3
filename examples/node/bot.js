#!/usr/bin/env node
// A Skyjo bot in Node.js for the skyjo-ref referee.
//
// It loads proto/skyjo/v1/skyjo.proto (a copy of the repository's, in its own folder:
// an isolated bot sees only its folder) at run time (no generated code),
// connects to SKYJO_ADDR with the bearer token SKYJO_TOKEN, says Hello, and
// plays game after game until the referee ends the session or it gets SIGTERM.
// When the stream drops it reconnects with exponential backoff and jitter;
// the referee then sends GameStart and the pending decision again.
//
//   SKYJO_ADDR=127.0.0.1:50051 SKYJO_TOKEN=... node bot.js
//
// TLS: set SKYJO_CA_FILE to the PEM of the CA that signed the referee's
// certificate (serve --tls-cert); add SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY
// when the referee asks for client certificates (serve --tls-client-ca).
//
// Strategy: keep low cards. Take the top discard when it is low; put a card
// where it replaces the highest revealed card; reveal rather than keep a high
// drawn card. See docs/writing-a-bot.md for the protocol, message by message.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.resolve(__dirname, 'proto');  // tests/test_node_bot.py keeps it equal to ../../proto
const PROTOCOL_VERSION = 1;
const BOT_NAME = process.env.SKYJO_BOT_NAME || 'node-lowcards';
const BOT_VERSION = '1.0.0';
const GIVE_UP_MS = Number(process.env.SKYJO_GIVE_UP_MS || 60000);
const VERBOSE = Boolean(process.env.SKYJO_VERBOSE);

// Statuses after which reconnecting cannot help (see docs/writing-a-bot.md).
const FATAL = new Map([
  [grpc.status.UNAUTHENTICATED, 'the referee refused the token'],
  [grpc.status.PERMISSION_DENIED, 'the referee refused the token'],
  [grpc.status.INVALID_ARGUMENT, 'the referee refused the session'],
  [grpc.status.FAILED_PRECONDITION, 'the referee refused the session'],
  [grpc.status.UNIMPLEMENTED, 'the server at this address is not a skyjo-ref referee'],
  [grpc.status.ABORTED, 'another connection with the same token replaced this one'],
]);

function log(...args) {
  console.error(new Date().toISOString(), BOT_NAME, ...args);
}

function debug(...args) {
  if (VERBOSE) log(...args);
}

// ------------------------------------------------------------------ strategy

function slotValue(slot) {
  // proto3 `optional`: the value is present only for revealed slots
  return slot.value === undefined || slot.value === null ? null : slot.value;
}

// Choose an action (an element of legalActions) for this view.
function choose(view, legalActions) {
  const grid = view.grids[view.seat].slots;
  const hidden = [];
  const revealed = [];
  grid.forEach((slot, pos) => {
    if (slot.state === 'SLOT_STATE_HIDDEN') hidden.push(pos);
    else if (slot.state === 'SLOT_STATE_REVEALED') revealed.push(pos);
  });
  const find = (kind, pos) => legalActions.findIndex((a) => a.kind === kind && (pos === undefined || a.pos === pos));

  switch (view.decision) {
    case 'DECISION_KIND_OPENING_REVEAL':
      return find('ACTION_KIND_REVEAL', hidden[0]);
    case 'DECISION_KIND_DRAW_OR_TAKE': {
      const top = view.discard_pile[view.discard_pile.length - 1];
      // take the discard when it is low, otherwise draw
      if (top !== undefined && top <= 3) return find('ACTION_KIND_TAKE');
      return find('ACTION_KIND_DRAW');
    }
    default: {
      const card = view.hand;
      let worstPos = -1;
      for (const p of revealed) {
        if (worstPos < 0 || slotValue(grid[p]) > slotValue(grid[worstPos])) worstPos = p;
      }
      if (worstPos >= 0 && slotValue(grid[worstPos]) > card) return find('ACTION_KIND_SWAP', worstPos);
      if (hidden.length > 0 && card <= 4) return find('ACTION_KIND_SWAP', hidden[0]);
      if (hidden.length > 0 && view.decision === 'DECISION_KIND_SWAP_OR_REVEAL') {
        return find('ACTION_KIND_REVEAL', hidden[0]);
      }
      return find('ACTION_KIND_SWAP', hidden.length > 0 ? hidden[0] : revealed[0]);
    }
  }
}

// ------------------------------------------------------------------ connection

function loadService() {
  const definition = protoLoader.loadSync('skyjo/v1/skyjo.proto', {
    includeDirs: [PROTO_ROOT],
    keepCase: true, // field names as in the .proto (request_id, legal_actions, ...)
    longs: String, // uint64 request ids as strings: echo them back unchanged
    enums: String, // enum values by name ('ACTION_KIND_SWAP')
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).skyjo.v1.BotService;
}

// skyjo-ref sets SKYJO_PARENT_PID when it starts the bot: once that process is gone (kill -9 of a
// tournament), end as on SIGTERM instead of retrying a dead referee. Node caches process.ppid, so
// the parent is read from /proc (Linux), else probed with signal 0.
function watchParent(parentPid) {
  if (!(parentPid > 0)) return;
  const gone = () => {
    try {
      const stat = fs.readFileSync('/proc/self/stat', 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== parentPid;
    } catch (err) {
      try {
        process.kill(parentPid, 0);
        return false;
      } catch (probe) {
        return probe.code === 'ESRCH';
      }
    }
  };
  const timer = setInterval(() => {
    if (gone()) {
      clearInterval(timer);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 200);
  timer.unref();
}

// The channel's credentials: TLS when SKYJO_CA_FILE names a CA (with a client certificate when
// SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY are set), plaintext otherwise and on unix: addresses.
function credentials(addr) {
  const env = process.env;
  if (!env.SKYJO_CA_FILE || addr.startsWith('unix:')) return grpc.credentials.createInsecure();
  const read = (file, what) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      console.error(`error: ${what} ${file}: cannot read: ${err.message}`);
      process.exit(2);
    }
  };
  if (Boolean(env.SKYJO_CLIENT_CERT) !== Boolean(env.SKYJO_CLIENT_KEY)) {
    console.error('error: a client certificate needs both SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY');
    process.exit(2);
  }
  const ca = read(env.SKYJO_CA_FILE, 'SKYJO_CA_FILE');
  const key = env.SKYJO_CLIENT_KEY ? read(env.SKYJO_CLIENT_KEY, 'SKYJO_CLIENT_KEY') : null;
  const cert = env.SKYJO_CLIENT_CERT ? read(env.SKYJO_CLIENT_CERT, 'SKYJO_CLIENT_CERT') : null;
  return grpc.credentials.createSsl(ca, key, cert);
}

function main() {
  const addr = (process.env.SKYJO_ADDR || '').replace(/^grpc:\/\//, '');
  const token = process.env.SKYJO_TOKEN || '';
  if (!addr || !token) {
    console.error('error: set SKYJO_ADDR (HOST:PORT of the referee) and SKYJO_TOKEN (the bot token)');
    process.exit(2);
  }
  const creds = credentials(addr);
  const BotService = loadService();
  let stopping = false;
  let call = null;
  let client = null;
  let attempt = 0;
  let lostSince = Date.now();
  let retryTimer = null;
  let games = 0;
  let decisions = 0;

  function finish(code, message) {
    if (message) console.error(message);
    if (retryTimer) clearTimeout(retryTimer);
    if (client) client.close();
    log(`played ${games} games, ${decisions} decisions`);
    process.exit(code);
  }

  function onSignal(sig) {
    log(`${sig}: closing the session`);
    stopping = true;
    if (call) call.cancel();
    finish(0);
  }
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  watchParent(Number(process.env.SKYJO_PARENT_PID || 0));

  function reconnect(why) {
    if (stopping) return;
    const waited = Date.now() - lostSince;
    if (waited > GIVE_UP_MS) {
      finish(1, `error: no session with the referee at ${addr} for ${Math.round(waited / 1000)} s (${why}): giving up`);
      return;
    }
    const delay = Math.min(5000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
    attempt += 1;
    log(`stream lost (${why}); reconnecting in ${Math.round(delay)} ms`);
    retryTimer = setTimeout(connect, delay);
  }

  function connect() {
    retryTimer = null;
    if (client) client.close();
    client = new BotService(addr, creds, {
      'grpc.keepalive_time_ms': 30000,
      'grpc.keepalive_timeout_ms': 10000,
      'grpc.max_receive_message_length': 1 << 20,
    });
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${token}`);
    const stream = client.Play(metadata);
    call = stream;
    let ended = false;

    stream.write({ hello: { name: BOT_NAME, version: BOT_VERSION, protocol_version: PROTOCOL_VERSION } });

    stream.on('data', (msg) => {
      switch (msg.message) {
        case 'welcome':
          attempt = 0;
          log(`connected to ${addr} as '${msg.welcome.seat_name}' (protocol ${msg.welcome.protocol_version})`);
          break;
        case 'game_start':
          debug(`game ${msg.game_start.game_id}: seat ${msg.game_start.seat} of ${msg.game_start.players.join(', ')}`);
          break;
        case 'decision': {
          const req = msg.decision;
          let index = choose(req.view, req.legal_actions);
          if (index < 0) index = 0; // never expected: fall back to the first legal action
          decisions += 1;
          stream.write({ reply: { request_id: req.request_id, index } });
          break;
        }
        case 'strike':
          log(`strike ${msg.strike.strikes}/${msg.strike.max_strikes} (${msg.strike.reason}): ${msg.strike.detail}`);
          break;
        case 'game_over':
          games += 1;
          debug(`game ${msg.game_over.game_id} over: totals ${msg.game_over.totals.join(', ')}`);
          break;
        default:
          break; // events and round results: this bot reads everything from the view
      }
    });

    stream.on('error', (err) => {
      if (ended) return;
      ended = true;
      lostSince = attempt === 0 ? Date.now() : lostSince;
      if (stopping) return;
      const fatal = FATAL.get(err.code);
      if (fatal) {
        finish(1, `error: ${fatal}: ${grpc.status[err.code]}: ${err.details}`);
        return;
      }
      reconnect(`${grpc.status[err.code] || err.code}: ${err.details}`);
    });

    stream.on('status', (status) => {
      if (status.code === grpc.status.OK && !ended) {
        ended = true;
        log('the referee ended the session');
        finish(0);
      }
    });

    stream.on('end', () => {
      // 'status' or 'error' follows and decides what to do
    });
  }

  connect();
}

if (require.main === module) {
  main();
}

module.exports = { choose };
