// A bare gRPC client on the TypeScript SDK's runtime (@connectrpc/connect-node and the SDK's generated
// messages), with no SDK: Hello, then index 0 for every decision. benchmarks/bench_sdk_typescript.py compares
// its round trip with the SDK's. Needs sdk/typescript built (npm ci && npx tsc -b).
import { create } from '../sdk/typescript/node_modules/@bufbuild/protobuf/dist/esm/index.js';
import { createClient } from '../sdk/typescript/node_modules/@connectrpc/connect/dist/esm/index.js';
import { createGrpcTransport } from '../sdk/typescript/node_modules/@connectrpc/connect-node/dist/esm/index.js';
import * as pb from '../sdk/typescript/dist/gen/skyjo/v1/skyjo_pb.js';

const transport = createGrpcTransport({ baseUrl: `http://${process.env.SKYJO_ADDR}` });
const client = createClient(pb.BotService, transport);
const queue = [];
let wake = null;
function send(message) {
  queue.push(create(pb.PlayRequestSchema, { message }));
  if (wake) wake();
}
async function* outgoing() {
  for (;;) {
    while (queue.length) yield queue.shift();
    await new Promise((resolve) => (wake = resolve));
    wake = null;
  }
}
process.on('SIGTERM', () => process.exit(0));
send({ case: 'hello', value: { name: 'bare', version: '1', protocolVersion: 1 } });
const headers = { authorization: `Bearer ${process.env.SKYJO_TOKEN}` };
for await (const msg of client.play(outgoing(), { headers })) {
  if (msg.message.case === 'welcome') process.stderr.write('connected to the referee\n');
  if (msg.message.case === 'decision') {
    send({ case: 'reply', value: { requestId: msg.message.value.requestId, choice: { case: 'index', value: 0 } } });
  }
}
