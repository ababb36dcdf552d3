// The TypeScript SDK running a bot that plays its first legal action (benchmarks/bench_sdk_typescript.py).
import { run } from '../sdk/typescript/dist/index.js';

await run({ name: 'first-legal', decide: (view) => view.legalActions[0] });
