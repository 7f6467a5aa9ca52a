// End to end: `tollgate health` asks a running gateway's /ready where its config says it listens, and
// the Dockerfile's HEALTHCHECK — run here as the image runs it, since no container engine is at hand:
// `tollgate` on PATH, the image's working directory holding tollgate.yaml, the gateway started by the
// image's CMD — follows the port that tollgate.yaml configures instead of assuming 8080.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { closedPort } from '../support/e2e.js';
import { BIN, runCli, type CliResult } from '../support/gateway-process.js';

const DOCKERFILE = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
const STARTS_AND_EXITS = { timeout: 30_000 };

/** An instruction's arguments, continuation lines joined; `last` picks the final one (WORKDIR, CMD). */
function instruction(name: string, which: 'first' | 'last' = 'first'): string {
  const lines = DOCKERFILE.replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.startsWith(`${name} `));
  const line = which === 'first' ? lines[0] : lines.at(-1);
  assert.ok(line, `the Dockerfile has a ${name} instruction`);
  return line.slice(name.length + 1).trim();
}

/** An exec-form (JSON array) or shell-form command as argv. */
function argv(command: string): string[] {
  return command.startsWith('[') ? (JSON.parse(command) as string[]) : ['sh', '-c', command];
}

/** The HEALTHCHECK's command: what follows CMD after the options (--interval=30s ...). */
function healthcheckCommand(): string[] {
  const spec = instruction('HEALTHCHECK');
  const at = spec.indexOf('CMD ');
  assert.ok(at >= 0, `HEALTHCHECK runs a command: ${spec}`);
  return argv(spec.slice(at + 4).trim());
}

function run(command: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves once a serve process logs that it listens; rejects if it exits first. */
function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let logs = '';
    const timer = setTimeout(() => reject(new Error(`the gateway did not start:\n${logs}`)), 15_000);
    child.stderr!.on('data', (data: Buffer) => {
      logs += data.toString();
      const line = logs.split('\n').find((l) => l.includes('"tollgate listening"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code} before listening:\n${logs}`));
    });
  });
}

function assertOneLineError(result: CliResult, pattern: RegExp): void {
  assert.equal(result.code, 1, `exit code (stdout: ${result.stdout}, stderr: ${result.stderr})`);
  assert.equal(result.stdout, '');
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack frames');
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line on stderr: ${JSON.stringify(result.stderr)}`);
  assert.match(result.stderr.trimEnd(), pattern);
}

/** A gateway config on `port` with one model on an upstream nobody calls here. */
function configOn(host: string, port: number): string {
  return `server: { host: "${host}", port: ${port} }
database: sqlite:./data/tollgate.db
providers: { local: { kind: openai-compatible, base_url: "http://127.0.0.1:9/v1" } }
models: { m: { upstreams: [{ provider: local, model: m }], price: { input: 1, output: 1 }, max_output_tokens: 10 } }
`;
}

describe("the container health check follows the configured port (issue 22 item 8)", () => {
  let root: string;
  /** The image's working directory (WORKDIR), holding tollgate.yaml and the database. */
  let workdir: string;
  /** PATH as in the image: `tollgate` is a command (a symlink to bin/tollgate.js), node beside it. */
  let env: NodeJS.ProcessEnv;
  let port: number;
  let gateway: ChildProcess;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tollgate-health-'));
    workdir = join(root, instruction('WORKDIR', 'last').replace(/^\//, ''));
    mkdirSync(workdir, { recursive: true });
    const bin = join(root, 'bin');
    mkdirSync(bin);
    symlinkSync(BIN, join(bin, 'tollgate'));
    const inherited = { ...process.env };
    delete inherited.TOLLGATE_CONFIG;
    env = { ...inherited, NODE_ENV: 'production', TOLLGATE_LOG_LEVEL: 'info', PATH: [bin, dirname(process.execPath), process.env.PATH].join(delimiter) };
    // Not 8080: a check that assumes the default port must fail here.
    port = await closedPort();
    assert.notEqual(port, 8080);
    // Listening on every address, as the image's CMD does (--host 0.0.0.0), with the config saying so too.
    writeFileSync(join(workdir, 'tollgate.yaml'), configOn('0.0.0.0', port));
    gateway = spawn(argv(instruction('CMD', 'last'))[0]!, argv(instruction('CMD', 'last')).slice(1), { cwd: workdir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await listening(gateway);
    assert.match(url, new RegExp(`:${port}/v1$`), 'the image runs `tollgate serve` on the configured port');
  });

  after(async () => {
    if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
      const exited = new Promise((resolve) => gateway.once('exit', resolve));
      gateway.kill('SIGKILL');
      await exited;
    }
    rmSync(root, { recursive: true, force: true });
  });

  test("the Dockerfile's HEALTHCHECK command passes against the gateway on the configured port", STARTS_AND_EXITS, async () => {
    const result = await run(healthcheckCommand(), { cwd: workdir, env });
    assert.equal(result.code, 0, `HEALTHCHECK ${healthcheckCommand().join(' ')} exited ${result.code}: ${result.stderr}`);
  });

  test('tollgate health asks /ready on loopback for a gateway listening on 0.0.0.0 and prints its answer', STARTS_AND_EXITS, async () => {
    const result = await run(['tollgate', 'health'], { cwd: workdir, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `http://127.0.0.1:${port}/ready: {"status":"ready"}\n`);
    assert.equal(result.stderr, '');
  });

  test('tollgate health --config names the file from anywhere, and --port overrides its port', STARTS_AND_EXITS, async () => {
    const config = join(workdir, 'tollgate.yaml');
    const ok = await runCli(['health', '--config', config], { cwd: root });
    assert.equal(ok.code, 0, ok.stderr);
    const elsewhere = await closedPort();
    const refused = await runCli(['health', '--config', config, '--port', String(elsewhere)], { cwd: root });
    assertOneLineError(refused, new RegExp(`^tollgate: http://127\\.0\\.0\\.1:${elsewhere}/ready did not answer: .*ECONNREFUSED`));
  });

  test('once the gateway has stopped, the HEALTHCHECK command fails', STARTS_AND_EXITS, async () => {
    const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
    gateway.kill('SIGTERM');
    assert.equal(await exited, 0, 'the gateway drains and exits 0');
    const result = await run(healthcheckCommand(), { cwd: workdir, env });
    assert.notEqual(result.code, 0, 'the check fails when nothing listens');
  });
});

describe('tollgate health refuses and reports clearly', () => {
  let dir: string;
  let slow: Server;
  let unready: Server;
  const config = (name: string, port: number) => {
    const path = join(dir, `${name}.yaml`);
    writeFileSync(path, configOn('127.0.0.1', port));
    return path;
  };
  const portOf = (server: Server) => (server.address() as { port: number }).port;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-health-errors-'));
    // Accepts the request and never answers.
    slow = createServer(() => undefined);
    // Answers like a gateway whose database is down.
    unready = createServer((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"not_ready","reason":"database_unavailable"}'));
    await Promise.all([slow, unready].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  });
  after(async () => {
    slow.closeAllConnections();
    await Promise.all([slow, unready].map((s) => new Promise((resolve) => s.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
  });

  test('a 503 from /ready exits 1 with the status and the reason', STARTS_AND_EXITS, async () => {
    const result = await runCli(['health', '--config', config('unready', portOf(unready))]);
    assertOneLineError(result, new RegExp(`^tollgate: http://127\\.0\\.0\\.1:${portOf(unready)}/ready answered 503: \\{"status":"not_ready","reason":"database_unavailable"\\}$`));
  });

  test('a server that never answers exits 1 once --timeout has passed', STARTS_AND_EXITS, async () => {
    const result = await runCli(['health', '--config', config('slow', portOf(slow)), '--timeout', '0.2']);
    assertOneLineError(result, new RegExp(`^tollgate: http://127\\.0\\.0\\.1:${portOf(slow)}/ready did not answer within 0\\.2 s$`));
  });

  test('a config whose port is 0 asks for --port instead of probing a random port', STARTS_AND_EXITS, async () => {
    const result = await runCli(['health', '--config', config('zero', 0)]);
    assertOneLineError(result, /^tollgate: server\.port is 0 .*pass the port the gateway listens on with --port$/);
  });

  for (const [args, pattern] of [
    [['--port', '0'], /^tollgate: --port must be a port number from 1 to 65535, got "0"$/],
    [['--port', 'http'], /^tollgate: --port must be a port number from 1 to 65535, got "http"$/],
    [['--timeout', '-1'], /^tollgate: --timeout must be a number of seconds above 0 \(at most 600\), got "-1"$/],
    [['--timeout', 'soon'], /^tollgate: --timeout must be a number of seconds above 0 \(at most 600\), got "soon"$/],
  ] as const) {
    test(`${args.join(' ')} is refused with one line and exit 1`, STARTS_AND_EXITS, async () => {
      const result = await runCli(['health', '--config', config('flags', portOf(unready)), ...args]);
      assertOneLineError(result, pattern);
    });
  }

  test('without a config it says which file is missing and creates none', STARTS_AND_EXITS, async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const result = await runCli(['health'], { cwd: empty });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, new RegExp(`^tollgate: invalid config ${join(empty, 'tollgate.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\n  - cannot read the file: ENOENT`));
    assert.equal(existsSync(join(empty, 'tollgate.yaml')), false, 'no tollgate.yaml was created');
  });
});
