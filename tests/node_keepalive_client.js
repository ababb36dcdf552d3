// A grpc-js bot that opens a Play stream, says Hello, and then stays idle while
// its channel sends keepalive pings every PING_MS, as docs/writing-a-bot.md asks
// of bots. It counts the ping answers (from grpc-js's keepalive trace) and
// exits 0 after PINGS of them on the same connection; it exits 1 when the
// stream or the connection ends first (printing why: a GOAWAY too_many_pings
// shows up as "goaway too_many_pings").
//
//   NODE_PATH=examples/node/node_modules GRPC_TRACE=keepalive,transport GRPC_VERBOSITY=DEBUG \
//   SKYJO_ADDR=... SKYJO_TOKEN=... PING_MS=300 PINGS=8 node tests/node_keepalive_client.js
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.resolve(__dirname, '..', 'proto');
const PING_MS = Number(process.env.PING_MS);
const PINGS = Number(process.env.PINGS);

let answered = 0;
let welcomed = false;

function done(code, message) {
  console.log(message);
  process.exit(code);
}

grpc.setLogger({
  error: (...args) => {
    const line = args.join(' ');
    if (line.includes('too_many_pings')) done(1, `goaway too_many_pings after ${answered} ping answers`);
    if (line.includes('Received ping response') && welcomed) {
      answered += 1;
      if (answered >= PINGS) done(0, `ok ${answered} ping answers on an idle stream`);
    }
  },
});

const definition = protoLoader.loadSync('skyjo/v1/skyjo.proto', {
  includeDirs: [PROTO_ROOT],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const BotService = grpc.loadPackageDefinition(definition).skyjo.v1.BotService;
const client = new BotService(process.env.SKYJO_ADDR, grpc.credentials.createInsecure(), {
  'grpc.keepalive_time_ms': PING_MS,
  'grpc.keepalive_timeout_ms': 10000,
});
const metadata = new grpc.Metadata();
metadata.add('authorization', `Bearer ${process.env.SKYJO_TOKEN}`);
const stream = client.Play(metadata);
stream.on('data', (msg) => {
  if (msg.message === 'welcome') welcomed = true;
  else done(1, `unexpected message ${msg.message} on an idle stream`);
});
stream.on('error', (err) => done(1, `stream ended after ${answered} ping answers: ${grpc.status[err.code]}: ${err.details}`));
stream.on('status', (status) => done(1, `stream ended after ${answered} ping answers: ${grpc.status[status.code]}`));
stream.write({ hello: { name: 'keepalive-probe', version: '1', protocol_version: 1 } });
