// Runs the real `claude -p` and `codex exec` through a real gateway and prints what happened as one JSON
// document (test/e2e/agent-clis.test.ts asserts on it). It must run inside a loopback-only network
// namespace (`unshare -n`, `ip link set lo up`): the CLIs are third-party programs that would otherwise
// reach the public internet. It refuses to start anything when the namespace has an interface besides lo.
//
// In the namespace: the mock Anthropic and Responses upstreams (answering in text, so each CLI's turn ends
// after one model request), a `tollgate serve` in front of them, four keys made with the real CLI ($5 and
// $0.001 for each agent), and each agent run once per key with a temp HOME, bounded by a timeout. Then
// Codex once more on a chat-only model (the mock OpenAI-compatible upstream, which serves only chat
// completions: the Responses → chat translation, ADR 0044), whose answer is a tool call first, then, once
// the tool's output comes back, text — a two-request tool loop.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentBinaries, readmeSetup, CLAUDE_BACKGROUND_MODEL, CLAUDE_MODEL, CODEX_CHAT_MODEL, CODEX_MODEL, type AgentBinaries, type AgentFacts, type AgentRun, type UpstreamCall } from '../../support/agent-clis.js';
import { stopGateway, startGateway, type GatewayProcess, type KeyAudit } from '../../support/gateway-process.js';
import { ledgerKinds, usageRows } from '../../support/ledger-check.js';
import { anthropicDefault, ANTHROPIC_MOCK_KEY, startMockAnthropic, type MockAnthropic } from '../../support/mock-anthropic.js';
import { CLAUDE_PRICES } from '../../support/messages-config.js';
import { mockDefault, RESPONSES_MOCK_KEY, startMockResponses, type MockResponses } from '../../support/mock-responses.js';
import { chatChunks, chatCompletion, defaultReply, defaultUsageFor, sseFromChunks, startMockUpstream, type MockReply, type MockUpstream, type ReceivedRequest } from '../../support/mock-upstream.js';
import { TEST_PRICES } from '../../support/money.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies and events are arbitrary JSON
type Json = any;

const PROMPT = 'Say hello';
/** Each CLI run is killed after this long (a CLI that loops or hangs must not hold the suite). */
const RUN_TIMEOUT_MS = 120_000;

/** The network interfaces of this process's namespace (/proc/self/net is per namespace; /sys is not). */
function interfaces(): string[] {
  return readFileSync('/proc/self/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]!.trim())
    .filter(Boolean);
}

function config(anthropic: MockAnthropic, responses: MockResponses, chat: MockUpstream): string {
  return `
server:
  host: 127.0.0.1
  port: 0
database: "{{DB}}"
providers:
  anthropic:
    kind: anthropic
    base_url: ${anthropic.url}
    api_key: ${ANTHROPIC_MOCK_KEY}
    retries: 0
  openai:
    kind: openai
    base_url: ${responses.url}
    api_key: ${RESPONSES_MOCK_KEY}
    retries: 0
  local:
    kind: openai-compatible
    base_url: ${chat.url}
    api_key: ""
    retries: 0
models:
  ${CLAUDE_MODEL}:
    upstreams: [{ provider: anthropic, model: ${CLAUDE_MODEL} }]
    price: { input: ${CLAUDE_PRICES.input}, output: ${CLAUDE_PRICES.output}, cached_input: ${CLAUDE_PRICES.cachedInput}, cache_write: ${CLAUDE_PRICES.cacheWrite}, cache_write_1h: ${CLAUDE_PRICES.cacheWrite1h} }
    max_output_tokens: 64000
  ${CLAUDE_BACKGROUND_MODEL}:
    upstreams: [{ provider: anthropic, model: ${CLAUDE_BACKGROUND_MODEL} }]
    price: { input: 1, output: 5, cached_input: 0.1, cache_write: 1.25, cache_write_1h: 2 }
    max_output_tokens: 64000
  ${CODEX_MODEL}:
    upstreams: [{ provider: openai, model: ${CODEX_MODEL} }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    max_output_tokens: 128000
  ${CODEX_CHAT_MODEL}:
    upstreams: [{ provider: local, model: Qwen/Qwen3-Coder-30B-A3B-Instruct }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    max_output_tokens: 16000
`;
}

/** A JSON log line of the gateway, or undefined for anything else it wrote (a Node warning, say). */
function parseLine(line: string): Json {
  try {
    return JSON.parse(line) as Json;
  } catch {
    return undefined;
  }
}

/** The usage a mock reply reports: a JSON answer's, or the last usage a stream event carries. */
function usageOf(reply: MockReply): Json {
  if ('json' in reply) return (reply.json as Json)?.usage ?? null;
  if (!('sse' in reply)) return null;
  let usage: Json = null;
  for (const event of reply.sse) {
    const text = typeof event === 'string' ? event : event.data;
    if (text === '[DONE]') continue;
    const data = JSON.parse(text) as Json;
    // Anthropic: message_delta carries the cumulative usage; Responses: the terminal event's response.usage.
    usage = data?.usage ?? data?.response?.usage ?? usage;
  }
  return usage;
}

/** Answers with the mock's own default and notes the usage it reported, per request. */
function noteUsage(reported: Map<ReceivedRequest, Json>, reply: (req: ReceivedRequest) => MockReply) {
  return (req: ReceivedRequest): MockReply => {
    const answer = reply(req);
    reported.set(req, (answer.status ?? 200) === 200 ? usageOf(answer) : null);
    return answer;
  };
}

/** The session the CLI named in the body it sent (forwarded byte for byte): Claude Code's metadata.user_id, Codex's prompt_cache_key. */
function sessionInBody(body: Json): string | null {
  const userId = body?.metadata?.user_id;
  if (typeof userId === 'string') {
    try {
      return (JSON.parse(userId) as Json).session_id ?? null;
    } catch {
      return userId;
    }
  }
  return typeof body?.prompt_cache_key === 'string' ? body.prompt_cache_key : null;
}

function upstreamCall(req: ReceivedRequest, reported: Map<ReceivedRequest, Json>, clientKeys: string[]): UpstreamCall {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]));
  return {
    method: req.method,
    url: req.url,
    headers,
    model: req.body?.model ?? null,
    stream: req.body?.stream === true,
    bodyBytes: req.rawBytes.length,
    clientKeyInBody: clientKeys.some((k) => req.rawBody.includes(k)),
    sessionInBody: sessionInBody(req.body),
    reportedUsage: reported.get(req) ?? null,
    maxTokens: typeof req.body?.max_tokens === 'number' ? req.body.max_tokens : null,
    thinkingBudget: typeof req.body?.thinking?.budget_tokens === 'number' ? req.body.thinking.budget_tokens : null,
    toolResultIds: messagesOf(req.body).flatMap((m) => (m?.role === 'tool' && typeof m.tool_call_id === 'string' ? [m.tool_call_id] : [])),
    toolCallIds: messagesOf(req.body).flatMap((m) => (Array.isArray(m?.tool_calls) ? m.tool_calls.map((c: Json) => String(c?.id)) : [])),
  };
}

/** The command the chat model asks Codex to run, and the call's id. */
const TOOL_COMMAND = 'echo tollgate-tool-ran';
const TOOL_CALL_ID = 'call_codex_exec_1';

/** A chat answer calling exec_command when the request offers it and carries no tool result yet. */
function execCall(req: ReceivedRequest): MockReply | undefined {
  const body = req.body as Json;
  const offered = Array.isArray(body?.tools) && body.tools.some((tool: Json) => tool?.function?.name === 'exec_command');
  if (!offered || messagesOf(body).some((m) => m?.role === 'tool')) return undefined;
  const spec = { model: body.model, usage: defaultUsageFor(body), toolCalls: [{ id: TOOL_CALL_ID, name: 'exec_command', arguments: { cmd: TOOL_COMMAND } }] };
  return body.stream === true ? sseFromChunks(chatChunks({ ...spec, usageMode: body.stream_options?.include_usage ? 'final-chunk' : 'none' })) : { json: chatCompletion(spec) };
}

function messagesOf(body: Json): Json[] {
  return Array.isArray(body?.messages) ? body.messages : [];
}

let sentinels = 0;

/**
 * Returns once the gateway has finished with every request the CLI made: a request sent now ends after
 * them, and the gateway logs (and writes the rows of) its requests in the order they end — so once this
 * one's log line is read, theirs have been.
 */
async function settled(gw: GatewayProcess): Promise<void> {
  const agent = `agent-clis-driver-sentinel-${++sentinels}`;
  await fetch(`${gw.origin}/`, { method: 'HEAD', headers: { 'user-agent': agent } });
  const deadline = Date.now() + 10_000;
  while (!gw.logs.some((line) => parseLine(line)?.userAgent === agent)) {
    if (Date.now() > deadline) throw new Error('the gateway did not log the sentinel request within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Run {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  ms: number;
  stdout: string;
  stderr: string;
}

/** Runs a CLI in its own process group, killed (the whole group) after RUN_TIMEOUT_MS. */
function runBounded(file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(file, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, RUN_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, ms: Date.now() - started, stdout, stderr });
    });
  });
}

/** The environment a CLI gets: nothing of this process's (no stray provider keys), a temp HOME, no colours. */
function baseEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1' };
}

/** The README's Claude Code variables, pointed at this gateway with `secret`; its models must be the ones configured here. */
function claudeEnvFor(gw: GatewayProcess, secret: string): NodeJS.ProcessEnv {
  const env = readmeSetup().claudeEnv;
  const expected = { ANTHROPIC_MODEL: CLAUDE_MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL: CLAUDE_BACKGROUND_MODEL };
  if (!env.ANTHROPIC_BASE_URL || !env.ANTHROPIC_AUTH_TOKEN) throw new Error(`README's Claude Code block no longer exports ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN: ${JSON.stringify(env)}`);
  for (const [name, value] of Object.entries(expected)) if (env[name] !== value) throw new Error(`README's Claude Code block sets ${name}=${env[name]}; the test configures ${value}`);
  return { ...env, ANTHROPIC_BASE_URL: gw.origin, ANTHROPIC_AUTH_TOKEN: secret };
}

/** The README's Codex config.toml with this gateway's base_url, and the variable its env_key names. */
function codexConfigFor(gw: GatewayProcess): { config: string; keyVariable: string } {
  const readme = readmeSetup().codexConfig;
  const keyVariable = /^env_key = "(\w+)"$/m.exec(readme)?.[1];
  const model = /^model = "([^"]+)"$/m.exec(readme)?.[1];
  if (!keyVariable || model !== CODEX_MODEL || !/^base_url = ".*"$/m.test(readme)) throw new Error(`README's Codex config.toml has no env_key, base_url or model = "${CODEX_MODEL}":\n${readme}`);
  return { config: readme.replace(/^base_url = ".*"$/m, `base_url = "${gw.baseURL}"`), keyVariable };
}

interface Agent {
  name: AgentRun['agent'];
  upstream: MockAnthropic | MockResponses | MockUpstream;
  /** The command line and environment for one run with `secret` in a fresh `home`. */
  command(bins: AgentBinaries, gw: GatewayProcess, secret: string, home: string): { file: string; args: string[]; env: NodeJS.ProcessEnv; setup: string };
}

/**
 * The README's config.toml for a chat-only model: its Codex block with this gateway and `model` set to
 * the chat model, without `web_search = "disabled"` (its "Codex on a chat-only model" says it is not needed).
 */
function codexChatConfigFor(gw: GatewayProcess): { config: string; keyVariable: string } {
  const { config, keyVariable } = codexConfigFor(gw);
  return { config: config.replace(/^model = ".*"$/m, `model = "${CODEX_CHAT_MODEL}"`).replace(/^web_search = .*\n/m, ''), keyVariable };
}

/** Codex on the chat-only model: the README's config.toml for it, as the funded Codex run writes its own. */
const codexChat = (chat: MockUpstream): Agent => ({
  name: 'codex-chat',
  upstream: chat,
  command: (bins, gw, secret, home) => {
    const { config, keyVariable } = codexChatConfigFor(gw);
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'config.toml'), config);
    return { file: process.execPath, args: [bins.codexScript, 'exec', '--skip-git-repo-check', PROMPT], env: { ...baseEnv(home), [keyVariable]: secret }, setup: config };
  },
});

const AGENTS = (anthropic: MockAnthropic, responses: MockResponses): Agent[] => [
  {
    name: 'claude',
    upstream: anthropic,
    // The README's variables, with this gateway's origin and the run's key.
    command: (bins, gw, secret, home) => ({
      file: bins.claude,
      args: ['-p', PROMPT],
      env: { ...baseEnv(home), ...claudeEnvFor(gw, secret), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
      setup: Object.entries(claudeEnvFor(gw, '<key>')).map(([name, value]) => `${name}=${value}`).join(' '),
    }),
  },
  {
    name: 'codex',
    upstream: responses,
    // The README's config.toml with this gateway's base_url, the run's key in the variable it names.
    command: (bins, gw, secret, home) => {
      const { config, keyVariable } = codexConfigFor(gw);
      mkdirSync(join(home, '.codex'));
      writeFileSync(join(home, '.codex', 'config.toml'), config);
      return { file: process.execPath, args: [bins.codexScript, 'exec', '--skip-git-repo-check', PROMPT], env: { ...baseEnv(home), [keyVariable]: secret }, setup: config };
    },
  },
];

const FUNDED = 5;
const BROKE = 0.001;
/** Short of a Claude Code turn's hold (~$0.58 for max_tokens 32000; its input alone ~$0.11), enough for a clamped one. */
const CLAMPED = 0.25;
/** The README's way to let the gateway lower Claude Code's max_tokens to what the balance covers. */
const CLAMP_ENV = { ANTHROPIC_CUSTOM_HEADERS: 'X-Tollgate-Max-Tokens: clamp' };

async function runAgent(agent: Agent, balance: number, bins: AgentBinaries, gw: GatewayProcess, reported: Map<ReceivedRequest, Json>, allKeys: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<AgentRun> {
  const key = await gw.createKey({ name: `${agent.name}-${balance}`, balance });
  allKeys.push(key.key);
  const before = gw.audit(key.id);
  const home = mkdtempSync(join(tmpdir(), `tollgate-${agent.name}-home-`));
  const work = mkdtempSync(join(tmpdir(), `tollgate-${agent.name}-work-`));
  try {
    const { file, args, env, setup } = agent.command(bins, gw, key.key, home);
    const first = agent.upstream.requests.length;
    const firstLog = gw.logs.length;
    const run = await runBounded(file, args, { ...env, ...extraEnv }, work);
    await settled(gw);
    const calls = agent.upstream.requests.slice(first);
    const gateway = gw.logs.slice(firstLog).flatMap((line) => {
      const entry = parseLine(line);
      return entry?.msg === 'request' && !String(entry.userAgent).startsWith('agent-clis-driver-sentinel-') ? [{ method: entry.method, path: entry.path, status: entry.status, error: entry.error ?? null, userAgent: entry.userAgent ?? null }] : [];
    });
    const after: KeyAudit = gw.audit(key.id);
    return {
      agent: agent.name,
      balance,
      command: [file, ...args],
      setup: [setup, ...Object.entries(extraEnv).map(([name, value]) => `${name}=${value}`)].join(' '),
      ...run,
      key: { id: key.id, secret: key.key },
      before,
      after,
      ledgerKinds: ledgerKinds(gw, key.id),
      rows: await usageRows(gw, key.id),
      gateway,
      upstream: calls.map((req) => upstreamCall(req, reported, allKeys)),
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<AgentFacts> {
  const found = interfaces();
  if (found.some((name) => name !== 'lo')) throw new Error(`not in a loopback-only network namespace (interfaces: ${found.join(', ')}); refusing to run the agent CLIs`);
  const bins = agentBinaries();
  const anthropic = await startMockAnthropic();
  const responses = await startMockResponses();
  const chat = await startMockUpstream();
  let gw: GatewayProcess | undefined;
  try {
    const reported = new Map<ReceivedRequest, Json>();
    anthropic.answerInText = true;
    responses.answerInText = true;
    anthropic.handle(noteUsage(reported, (req) => anthropicDefault(anthropic, req)));
    responses.handle(noteUsage(reported, (req) => mockDefault(responses, req)));
    // A call of Codex's exec_command (a harmless echo) until a tool result comes back, then the mock's default text.
    chat.handle(noteUsage(reported, (req) => execCall(req) ?? defaultReply(req)));
    // At debug, every request the CLIs make is logged (HEAD / included), never a header or a body.
    gw = await startGateway({ config: config(anthropic, responses, chat), env: { TOLLGATE_LOG_LEVEL: 'debug' } });
    const keys: string[] = [];
    const runs: AgentRun[] = [];
    for (const agent of AGENTS(anthropic, responses)) {
      for (const balance of [FUNDED, BROKE]) runs.push(await runAgent(agent, balance, bins, gw, reported, keys));
      if (agent.name === 'claude') runs.push(await runAgent(agent, CLAMPED, bins, gw, reported, keys, CLAMP_ENV));
    }
    runs.push(await runAgent(codexChat(chat), FUNDED, bins, gw, reported, keys));
    return { interfaces: found, gatewayLogs: gw.logs.filter((line) => /"level":(40|50|60)/.test(line)), runs };
  } finally {
    await anthropic.close();
    await responses.close();
    await chat.close();
    if (gw) await stopGateway(gw, 10_000);
  }
}

try {
  process.stdout.write(`${JSON.stringify(await main())}\n`);
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
}
