#!/usr/bin/env node
// The `tollgate` command: runs the compiled CLI (built by `npm install` / `npm run build`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('tollgate: dist/ is missing; run `npm run build` first');
  process.exit(1);
}
const { runCli } = await import(entry.href);
await runCli(process.argv);
