// End to end: the real `tollgate` CLI writing into a pipe whose reader stops early — `| head -1`, or a
// reader that is gone before the first byte. A closed pipe is not a failure: every command exits 0 with
// nothing on stderr (no EPIPE stack trace), and `keys create` / `keys rotate` put the once-shown secret
// alone on the first line, so `| head -1` keeps it and it works.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/open-database.js';
import { issueKey } from '../../src/operations/keys.js';
import { BIN, type CliResult, type CreatedKey } from '../support/gateway-process.js';
import { assertChatOk, assertErrorResponse, parseJsonOutput, postChat, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';

const messages = [{ role: 'user', content: 'Hello' }];
/** Enough keys that `keys list` prints several pipe buffers (64 KiB) of table: the write blocks, then fails. */
const MANY_KEYS = 1500;

/** The environment the CLI runs in: this one without $TOLLGATE_CONFIG (tests pass --config). */
function cliEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TOLLGATE_CONFIG;
  return env;
}

/**
 * `tollgate ARGS | READER` in bash with pipefail: the status is the CLI's when it failed (else the
 * reader's), stdout is what the reader printed and stderr the CLI's.
 */
function cliPiped(args: string[], reader: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -o pipefail; "$@" | ${reader}`, 'bash', process.execPath, BIN, ...args], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `tollgate ARGS` with its stdout pipe closed before the CLI writes a byte; resolves with its own status and stderr. */
function cliIntoClosedPipe(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone: every write to stdout fails with EPIPE
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: '', stderr }));
  });
}

function assertQuietExit(result: CliResult, what: string): void {
  assert.equal(result.stderr, '', `${what}: nothing on stderr (no EPIPE stack trace)`);
  assert.equal(result.code, 0, `${what}: exit status 0`);
}

describe('the CLI writing into a closed pipe', () => {
  let e: E2E;
  let key: CreatedKey;
  let cfg: string[];

  before(async () => {
    e = await startE2E();
    key = await e.gw.createKey({ name: 'existing', balance: 5 });
    cfg = ['--config', e.gw.configPath];
  });
  after(() => stopE2E(e));

  test('`keys create ... | head -1` prints the secret alone on the first line, exits 0, and the secret works', async () => {
    const result = await cliPiped(['keys', 'create', '--name', 'piped', '--balance', '5', ...cfg], 'head -1');
    assertQuietExit(result, 'keys create | head -1');
    const lines = result.stdout.split('\n');
    assert.deepEqual(lines.slice(1), [''], 'exactly one line');
    const secret = lines[0]!;
    assert.match(secret, /^tg-[A-Za-z0-9_-]+$/, 'the first line is the secret');
    assertChatOk(await postChat(e.gw, secret, { model: 'gpt-test', messages }), 'gpt-test');
    const listed = parseJsonOutput<Json[]>(await e.gw.cli(['keys', 'list', '--json']), 'keys list --json');
    const piped = listed.find((k) => k.name === 'piped');
    assert.ok(piped, 'the key is listed');
    assert.ok(secret.startsWith(piped.prefix), 'under the prefix of the secret');
  });

  test('`keys create` without a pipe still says what it made and that the secret is shown once', async () => {
    const result = await e.gw.cli(['keys', 'create', '--name', 'plain', '--balance', '1']);
    assert.equal(result.code, 0, result.stderr);
    const [secret, created, note] = result.stdout.split('\n');
    assert.match(secret!, /^tg-/);
    assert.match(created!, /^Created key key_\w+ \(plain\): balance \$1, all models\.$/);
    assert.match(note!, /shown only now/);
  });

  test('`keys rotate ID | head -1` prints the new secret on the first line; it works and the old one does not', async () => {
    const rotated = await e.gw.createKey({ name: 'to-rotate', balance: 5 });
    const result = await cliPiped(['keys', 'rotate', rotated.id, ...cfg], 'head -1');
    assertQuietExit(result, 'keys rotate | head -1');
    const secret = result.stdout.trimEnd();
    assert.match(secret, /^tg-[A-Za-z0-9_-]+$/);
    assertChatOk(await postChat(e.gw, secret, { model: 'gpt-test', messages }), 'gpt-test');
    assertErrorResponse(await postChat(e.gw, rotated.key, { model: 'gpt-test', messages }), 401, 'invalid_api_key');
  });

  test('every command exits 0 without a stack trace when its reader is gone before it writes', async () => {
    const commands: string[][] = [
      ['keys', 'list'],
      ['keys', 'list', '--json'],
      ['keys', 'show', key.id],
      ['keys', 'show', key.id, '--json'],
      ['keys', 'create', '--name', 'unread', '--json'],
      ['keys', 'topup', key.id, '1'],
      ['keys', 'topup', key.id, '1', '--json'],
      ['usage'],
      ['usage', '--json'],
      ['audit'],
      ['audit', '--json'],
      ['config', 'check'],
      ['config', 'check', '--json'],
    ];
    for (const args of commands) assertQuietExit(await cliIntoClosedPipe([...args, ...cfg]), `tollgate ${args.join(' ')}`);
    assertQuietExit(await cliIntoClosedPipe(['--version']), 'tollgate --version');
    assertQuietExit(await cliIntoClosedPipe(['keys', '--help']), 'tollgate keys --help');
    // The commands did their work: the two top-ups of $1 are on the balance.
    const shown = parseJsonOutput<Json>(await e.gw.cli(['keys', 'show', key.id, '--json']), 'keys show');
    assert.equal(shown.balance, 7);
  });

  test('a listing of many lines read only to its first line (`keys list | head -1`, `--json` too) exits 0', async () => {
    const config = loadConfig(e.gw.configPath);
    const store = await openDatabase(config.database);
    try {
      for (let i = 0; i < MANY_KEYS; i++) await issueKey(store, config, { name: `bulk-${i}`, balance: 1 });
    } finally {
      await store.close();
    }
    const table = await cliPiped(['keys', 'list', ...cfg], 'head -1');
    assertQuietExit(table, 'keys list | head -1');
    assert.match(table.stdout, /^ID\s+NAME\s+PREFIX/);
    const json = await cliPiped(['keys', 'list', '--json', ...cfg], 'head -1');
    assertQuietExit(json, 'keys list --json | head -1');
    assert.equal(json.stdout, '[\n');
    // Read to the end, the listing is whole.
    const listed = parseJsonOutput<Json[]>(await e.gw.cli(['keys', 'list', '--json']), 'keys list --json');
    assert.ok(listed.length > MANY_KEYS);
  });
});
