#!/usr/bin/env node
// The `tollgate` command: runs the compiled CLI (built by `npm install` / `npm run build`).
import { existsSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
const entry = new URL('cli/main.js', dist);
if (!existsSync(entry)) {
  console.error('tollgate: dist/ is missing; run `npm run build` first');
  process.exit(1);
}
if (process.argv.includes('serve')) {
  // Before the CLI's modules load: startup's allocations must not size the gateway's young generation
  // (released once it listens; docs/adr/0025-heap-growth.md).
  const { holdYoungGeneration } = await import(new URL('heap-growth.js', dist).href);
  holdYoungGeneration();
}
const { runCli } = await import(entry.href);
await runCli(process.argv);
