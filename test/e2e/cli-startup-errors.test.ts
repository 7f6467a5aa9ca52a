// End to end: the real `tollgate` command, when it cannot start — the port is taken, the database path
// is unusable, the log level is unknown — says so in one line on stderr and exits 1, never with a
// stack trace; and `--version` / `-V` print the package version.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, type CliResult } from '../support/gateway-process.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const isRoot = process.getuid?.() === 0;
/** A serve that wrongly starts would never exit: fail the test instead of hanging the run. */
const STARTS_AND_EXITS = { timeout: 30_000 };
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Exit 1, nothing on stdout, and exactly one line on stderr matching `pattern` — no stack frames. */
function assertOneLineError(result: CliResult, pattern: RegExp): void {
  assert.equal(result.code, 1, `exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, '');
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack frames');
  assert.ok(result.stderr.endsWith('\n'), 'the line ends with a newline');
  const lines = result.stderr.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `one line on stderr: ${JSON.stringify(result.stderr)}`);
  assert.match(lines[0]!, pattern);
}

describe('tollgate: startup and CLI errors are one clear line (issue 15 item 8)', () => {
  let dir: string;
  /** Writes a config whose database is `database` and returns its path. */
  let configWith: (name: string, database: string) => string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-errors-'));
    configWith = (name, database) => {
      const path = join(dir, `${name}.yaml`);
      writeFileSync(
        path,
        `server: { host: 127.0.0.1, port: 0 }
database: "${database}"
providers: { local: { kind: openai-compatible, base_url: "http://127.0.0.1:9/v1" } }
models: { m: { upstreams: [{ provider: local, model: m }], price: { input: 1, output: 1 }, max_output_tokens: 10 } }
`,
      );
      return path;
    };
  });
  after(() => {
    if (!isRoot) chmodSync(join(dir, 'readonly'), 0o700);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const flag of ['--version', '-V']) {
    test(`${flag} prints the package version and exits 0`, async () => {
      const result = await runCli([flag]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `${VERSION}\n`);
      assert.equal(result.stderr, '');
    });
  }

  describe('serve on a port already in use', () => {
    let occupied: Server;
    let port: number;
    before(async () => {
      occupied = createServer();
      await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
      port = (occupied.address() as { port: number }).port;
    });
    after(() => new Promise<void>((resolve) => occupied.close(() => resolve())));

    test('says which address is taken in one line and exits 1', STARTS_AND_EXITS, async () => {
      const config = configWith('port', `sqlite:${join(dir, 'port.db')}`);
      const result = await runCli(['serve', '--config', config, '--port', String(port)]);
      assertOneLineError(result, new RegExp(`^tollgate: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use$`));
    });
  });

  test('serve and keys list on a database path under a regular file name it as not a directory', STARTS_AND_EXITS, async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const config = configWith('file-parent', `sqlite:${file}/tollgate.db`);
    const expected = new RegExp(`^tollgate: cannot open the database ${literally(`sqlite:${file}/tollgate.db`)}: ${literally(file)} is not a directory$`);
    assertOneLineError(await runCli(['serve', '--config', config]), expected);
    assertOneLineError(await runCli(['keys', 'list', '--config', config]), expected);
  });

  test('a database path that is a directory is named as one', STARTS_AND_EXITS, async () => {
    const directory = join(dir, 'a-directory.db');
    mkdirSync(directory);
    const config = configWith('dir', `sqlite:${directory}`);
    const expected = new RegExp(`^tollgate: cannot open the database ${literally(`sqlite:${directory}`)}: ${literally(directory)} is a directory, not a database file$`);
    assertOneLineError(await runCli(['serve', '--config', config]), expected);
  });

  test('a database in a directory that cannot be written is one line (naming the directory, when permissions apply)', STARTS_AND_EXITS, async () => {
    // root writes anywhere permissions allow nothing, so for root the directory is /proc.
    const readonly = isRoot ? '/proc' : join(dir, 'readonly');
    if (!isRoot) {
      mkdirSync(readonly);
      chmodSync(readonly, 0o555);
    }
    const database = `sqlite:${readonly}/tollgate-cli-errors-${process.pid}.db`;
    const config = configWith('readonly', database);
    const reason = isRoot ? '.+' : `${literally(readonly)} is not writable`;
    const expected = new RegExp(`^tollgate: cannot open the database ${literally(database)}: ${reason}$`);
    assertOneLineError(await runCli(['serve', '--config', config]), expected);
    assertOneLineError(await runCli(['keys', 'list', '--config', config]), expected);
  });

  test('a database file that is not SQLite is one line with SQLite\'s reason', STARTS_AND_EXITS, async () => {
    const file = join(dir, 'garbage.db');
    writeFileSync(file, 'this is not a SQLite database, just text that is long enough to be read as a header '.repeat(20));
    const config = configWith('garbage', `sqlite:${file}`);
    const expected = new RegExp(`^tollgate: cannot open the database ${literally(`sqlite:${file}`)}: file is not a database$`);
    assertOneLineError(await runCli(['serve', '--config', config]), expected);
    assertOneLineError(await runCli(['keys', 'list', '--config', config]), expected);
  });

  test('an unknown TOLLGATE_LOG_LEVEL lists the valid levels in one line and exits 1', STARTS_AND_EXITS, async () => {
    const config = configWith('log', `sqlite:${join(dir, 'log.db')}`);
    const result = await runCli(['serve', '--config', config], { env: { TOLLGATE_LOG_LEVEL: 'verbose' } });
    assertOneLineError(result, /^tollgate: TOLLGATE_LOG_LEVEL: unknown level "verbose" \(one of: trace, debug, info, warn, error, fatal, silent\)$/);
  });
});
