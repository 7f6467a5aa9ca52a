// The SQLite driver this Node loads (src/storage/sqlite/driver.ts): better-sqlite3 13 where Node-API 10
// exists, 12 (the better-sqlite3-node20 alias) where it does not — and whichever it is, statements that
// V8 collects while the process runs do not abort it. better-sqlite3 12 built for Node 24 did: its
// objects' destructor checks for a JavaScript context that V8's own GC tasks do not enter.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { SQLITE_DRIVER, openSqliteFile } from '../../../src/storage/sqlite/driver.js';

const require = createRequire(import.meta.url);
const napi = Number(process.versions.napi);

test('the driver is better-sqlite3 13 where Node-API 10 exists, else better-sqlite3 12 (Node 20)', () => {
  const { name, version } = require(`${SQLITE_DRIVER}/package.json`) as { name: string; version: string };
  assert.equal(name, 'better-sqlite3');
  assert.equal(Number(version.split('.')[0]), napi >= 10 ? 13 : 12, `Node ${process.version}, Node-API ${napi}: ${SQLITE_DRIVER}@${version}`);
});

test('the driver opens a database and runs a statement', () => {
  const db = openSqliteFile(':memory:');
  try {
    assert.deepEqual(db.prepare('SELECT 1 + 1 AS two').get(), { two: 2 });
  } finally {
    db.close();
  }
});

test('a process whose prepared statements are garbage-collected as it runs lives on and exits 0', { timeout: 60_000 }, async () => {
  // Prepares ~2,000 statements a millisecond for 3 s and drops them: V8 collects them, partly in its
  // own GC tasks. better-sqlite3 12 on Node 24.21 aborted here in 4 runs of 6 (SIGABRT, exit 134).
  const script = `
    const Database = require(${JSON.stringify(require.resolve(SQLITE_DRIVER))});
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (a INTEGER)');
    let n = 0;
    const churn = setInterval(() => { for (let i = 0; i < 2000; i++) db.prepare('SELECT a + ' + n++ + ' FROM t').get(); }, 1);
    setTimeout(() => { clearInterval(churn); db.close(); console.log('prepared ' + n); }, 3000);
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  assert.equal(signal, null, `killed by ${signal}: ${output.slice(0, 2000)}`);
  assert.equal(code, 0, output.slice(0, 2000));
  assert.match(output, /^prepared \d+\n$/);
});
