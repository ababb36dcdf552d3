/** The vocabulary and the settings a bot is started with: actions, grids, addresses, TLS files, options. */

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { raisedAt, statusName } from '../client.js';
import { checkAddress, clientTls, endpoint, unixPath, UsageError } from '../connection.js';
import { Action, Grid, InvalidActionError, parseCommandLine, type SlotState } from '../index.js';
import { Code } from '@connectrpc/connect';

test('actions: constructors, text form, parse, interning, refusals', () => {
  assert.equal(String(Action.swap(3)), 'swap 3');
  assert.equal(String(Action.draw()), 'draw');
  assert.equal(Action.parse(' Reveal  11 '), Action.reveal(11));
  assert.equal(Action.parse('take'), Action.take());
  assert.ok(Action.swap(3) === Action.parse('swap 3'));
  assert.deepEqual(Action.swap(3).toJSON(), { act: 'swap', pos: 3 });
  assert.throws(() => Action.swap(12), InvalidActionError);
  assert.throws(() => Action.reveal(1.5), /position 0-11/);
  assert.throws(() => Action.of('draw', 2), /takes no position/);
  assert.throws(() => Action.parse('jump'), /unknown action "jump"/);
  assert.throws(() => Action.parse('swap x'), /not a number/);
  assert.throws(() => Action.parse(''), /expected 'draw'/);
  assert.throws(() => {
    (Action.draw() as { pos: number | null }).pos = 3;
  }, TypeError);
});

test('grids: positions ascending, columns, sums, rendering', () => {
  const states: SlotState[] = Array(12).fill('hidden');
  const values: (number | null)[] = Array(12).fill(null);
  states[0] = 'revealed';
  values[0] = 7;
  states[4] = 'revealed';
  values[4] = -2;
  states[8] = 'removed';
  const grid = new Grid(states, values);
  assert.deepEqual(grid.revealedPositions(), [0, 4]);
  assert.deepEqual(grid.hiddenPositions(), [1, 2, 3, 5, 6, 7, 9, 10, 11]);
  assert.equal(grid.openPositions().length, 11);
  assert.equal(grid.revealedSum(), 5);
  assert.deepEqual(grid.column(0), [7, -2, null]);
  assert.equal(grid.render().split('\n')[2], '  .   ?   ?   ?');
});

test('addresses: HOST:PORT and unix:PATH, refused in one line', () => {
  assert.equal(checkAddress('grpc://127.0.0.1:50051'), '127.0.0.1:50051');
  assert.equal(checkAddress('[::1]:9'), '[::1]:9');
  assert.equal(unixPath(checkAddress('unix:/run/skyjo/referee.sock')), '/run/skyjo/referee.sock');
  assert.equal(unixPath('unix:///tmp/r.sock'), '/tmp/r.sock');
  assert.equal(endpoint('unix:/tmp/r.sock', null).baseUrl, 'http://localhost');
  assert.throws(() => checkAddress('localhost'), /expected HOST:PORT/);
  assert.throws(() => checkAddress('h:70000'), /port must be 0-65535/);
  assert.throws(() => checkAddress('unix:'), /socket path after unix:/);
});

test('TLS files: read from arguments or the environment, refused in one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skyjo-tls-'));
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
  writeFileSync(join(dir, 'junk.pem'), 'nothing');
  assert.equal(clientTls({}, {}), null);
  assert.equal(clientTls({}, { SKYJO_CA_FILE: ca })?.cert, null);
  assert.ok(clientTls({ caFile: ca }, {})?.ca.includes('BEGIN'));
  assert.throws(() => clientTls({}, { SKYJO_CLIENT_CERT: ca, SKYJO_CLIENT_KEY: ca }), /needs TLS/);
  assert.throws(() => clientTls({ caFile: ca, clientCert: ca }, {}), /add --client-key/);
  assert.throws(() => clientTls({ caFile: join(dir, 'junk.pem') }, {}), /not PEM/);
  assert.throws(() => clientTls({ caFile: join(dir, 'none.pem') }, {}), UsageError);
  assert.throws(() => clientTls({ caFile: dir }, {}), /is a folder/);
});

test('command line: options over the environment, bad ones refused', () => {
  const options = parseCommandLine(['--addr', 'unix:/s', '--token', 't', '-vv', '--give-up', '1.5']);
  assert.equal(options.addr, 'unix:/s');
  assert.equal(options.verbosity, 2);
  assert.equal(options.giveUpAfterMs, 1500);
  assert.throws(() => parseCommandLine(['--give-up', 'soon']), /expected a number of seconds/);
  assert.throws(() => parseCommandLine(['--colour']), UsageError);
});

test('status names are gRPC\'s, and a thrown error names the line that threw', () => {
  assert.equal(statusName(Code.Unauthenticated), 'UNAUTHENTICATED');
  assert.equal(statusName(Code.InvalidArgument), 'INVALID_ARGUMENT');
  assert.equal(statusName(Code.Canceled), 'CANCELLED');
  let where = '';
  try {
    Action.swap(99);
  } catch (err) {
    where = raisedAt(err);
  }
  assert.match(where, /types\.test\.(js|ts):\d+\)$/, 'blames the caller, not the SDK');
});
