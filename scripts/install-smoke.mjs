// CI: starts an installed Tollgate as the README's systemd unit does (bin/tollgate.js serve --config FILE,
// NODE_ENV=production, its own state directory) on a free port, in front of the test suite's mock
// upstream, and uses it: /health, /ready, `tollgate health`, a key made with the installed CLI, GET
// /v1/key, a chat completion that is billed, the dashboard; then SIGTERM, which must exit 0.
//
//   node scripts/install-smoke.mjs INSTALL_DIR
//
// Run from this checkout (the mock upstream runs from its test/support with tsx); INSTALL_DIR needs only
// the production install. Any failed check exits 1 with the gateway's log.
/* global fetch, AbortSignal -- Node's own, as in the gateway */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const install = process.argv[2];
if (!install) {
  console.error('usage: node scripts/install-smoke.mjs INSTALL_DIR');
  process.exit(2);
}
const tollgate = join(install, 'bin', 'tollgate.js');
const children = [];
let gatewayLog = '';

function fail(message) {
  console.error(`install-smoke: ${message}`);
  if (gatewayLog && !message.includes(gatewayLog)) console.error(`--- the gateway's log\n${gatewayLog}`);
  process.exit(1);
}

function check(ok, message) {
  if (!ok) fail(message);
}

/** Starts a process and resolves with the first match of `pattern` in its output (stdout or stderr). */
function startAndWait(command, argv, options, pattern, onOutput = () => {}) {
  const child = spawn(command, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')} did not start in 30 s:\n${output}`)), 30_000);
    const read = (data) => {
      output += data.toString();
      onOutput(data.toString());
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${argv.join(' ')} exited ${code} before it was ready:\n${output}`));
    });
  });
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function get(url, headers = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
}

const state = mkdtempSync(join(tmpdir(), 'tollgate-smoke-'));
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(state, { recursive: true, force: true });
});

try {
  // The upstream: the suite's mock (OpenAI-compatible, usage on every answer); its URL ends in /v1.
  const mock = await startAndWait(process.execPath, ['--import', 'tsx', 'test/support/mock-upstream-cli.ts', '--port', '0', '--no-record'], { cwd: ROOT }, /listening on (http:\/\/\S+)/);
  const upstream = mock.match[1];

  // As in the README: the config in its own directory, the database in the state directory.
  const etc = join(state, 'etc');
  const varLib = join(state, 'var-lib');
  mkdirSync(etc);
  mkdirSync(varLib);
  const port = await freePort();
  const config = join(etc, 'tollgate.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, port: ${port} }
database: sqlite:${join(varLib, 'tollgate.db')}
providers:
  mock: { kind: openai-compatible, base_url: "${upstream}", api_key: "\${SMOKE_UPSTREAM_KEY}" }
models:
  smoke-chat:
    upstreams: [{ provider: mock, model: gpt-4o-mini }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
`,
  );
  const env = { ...process.env, NODE_ENV: 'production', TOLLGATE_LOG_LEVEL: 'info', SMOKE_UPSTREAM_KEY: 'sk-smoke-upstream' };
  delete env.TOLLGATE_CONFIG;
  const started = await startAndWait(process.execPath, [tollgate, 'serve', '--config', config], { cwd: varLib, env }, /"tollgate listening"/, (text) => (gatewayLog += text));
  const origin = `http://127.0.0.1:${port}`;
  console.log(`install-smoke: ${install} serves ${origin} on Node ${process.version}`);

  const health = await get(`${origin}/health`);
  check(health.status === 200 && JSON.parse(health.text).status === 'ok', `GET /health: ${health.status} ${health.text}`);
  const ready = await get(`${origin}/ready`);
  check(ready.status === 200 && JSON.parse(ready.text).status === 'ready', `GET /ready: ${ready.status} ${ready.text}`);

  const cli = (args) => spawnSync(process.execPath, [tollgate, ...args, '--config', config], { cwd: varLib, env, encoding: 'utf8' });
  const probe = cli(['health']);
  check(probe.status === 0, `tollgate health exited ${probe.status}: ${probe.stderr}`);

  const created = cli(['keys', 'create', '--name', 'smoke', '--balance', '1', '--json']);
  check(created.status === 0, `tollgate keys create exited ${created.status}: ${created.stderr}`);
  const key = JSON.parse(created.stdout);
  const auth = { authorization: `Bearer ${key.key}` };
  const before = await get(`${origin}/v1/key`, auth);
  check(before.status === 200 && JSON.parse(before.text).data?.balance === 1, `GET /v1/key with the new key: ${before.status} ${before.text}`);
  const anonymous = await get(`${origin}/v1/key`);
  check(anonymous.status === 401, `GET /v1/key without a key: ${anonymous.status}, expected 401`);

  const chat = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'smoke-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = await chat.text();
  check(chat.status === 200, `POST /v1/chat/completions: ${chat.status} ${answer}`);
  const completion = JSON.parse(answer);
  check(typeof completion.choices?.[0]?.message?.content === 'string' && completion.usage?.cost > 0, `the chat answer has a message and a cost: ${answer}`);

  // The charge is settled after the answer; the key's balance shows it once it is.
  let after;
  for (let i = 0; i < 50; i++) {
    after = JSON.parse((await get(`${origin}/v1/key`, auth)).text).data;
    if (after.balance < 1) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  check(Math.abs(after.balance - (1 - completion.usage.cost)) < 1e-9, `the key was charged the answer's cost: balance ${after.balance}, cost ${completion.usage.cost}`);

  const dashboard = await get(`${origin}/dashboard/`);
  check(dashboard.status === 200 && dashboard.type.startsWith('text/html'), `GET /dashboard/: ${dashboard.status} ${dashboard.type}`);

  const exited = new Promise((resolve) => started.child.once('exit', (code, signal) => resolve(code ?? signal)));
  started.child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000))]);
  check(code === 0, `after SIGTERM the gateway exited ${code}, expected 0`);
  console.log('install-smoke: /health, /ready, tollgate health, keys create, /v1/key, a billed chat, the dashboard and a clean stop: ok');
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
process.exit(0);
