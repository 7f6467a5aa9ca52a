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
// the tool's output comes back, text — a two-request tool loop; Codex on Claude (the mock Anthropic
// upstream through the Responses → Anthropic translation, ADR 0045), the same loop with thinking, whose
// envelope Codex echoes on its second request. Claude Code likewise on a chat-only model
// (the Messages → chat translation, ADR 0043): the upstream calls its Bash tool, Claude Code (told it may
// use Bash without asking) runs it and sends the result, the upstream answers in text.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentBinaries, readmeSetup, CLAUDE_BACKGROUND_MODEL, CLAUDE_CHAT_MODEL, CLAUDE_MODEL, CODEX_CHAT_MODEL, CODEX_CLAUDE_MODEL, CODEX_CLAUDE_UPSTREAM, CODEX_MODEL, type AgentBinaries, type AgentFacts, type AgentRun, type UpstreamCall } from '../../support/agent-clis.js';
import { stopGateway, startGateway, type GatewayProcess, type KeyAudit } from '../../support/gateway-process.js';
import { ledgerKinds, usageRows } from '../../support/ledger-check.js';
import { anthropicDefault, anthropicUsageFor, ANTHROPIC_MOCK_KEY, ANTHROPIC_THINKING, signatureFor, startMockAnthropic, type MockAnthropic } from '../../support/mock-anthropic.js';
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
  ${CLAUDE_CHAT_MODEL}:
    upstreams: [{ provider: local, model: ${CLAUDE_CHAT_UPSTREAM} }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    max_output_tokens: 16384
  ${CODEX_MODEL}:
    upstreams: [{ provider: openai, model: ${CODEX_MODEL} }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    max_output_tokens: 128000
  ${CODEX_CHAT_MODEL}:
    upstreams: [{ provider: local, model: Qwen/Qwen3-Coder-30B-A3B-Instruct }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    max_output_tokens: 16000
  ${CODEX_CLAUDE_MODEL}:
    upstreams: [{ provider: anthropic, model: ${CODEX_CLAUDE_UPSTREAM} }]
    price: { input: ${CLAUDE_PRICES.input}, output: ${CLAUDE_PRICES.output}, cached_input: ${CLAUDE_PRICES.cachedInput}, cache_write: ${CLAUDE_PRICES.cacheWrite}, cache_write_1h: ${CLAUDE_PRICES.cacheWrite1h} }
    max_output_tokens: 32000
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
    toolResults: toolResultsOf(req.body),
    ...(req.body?.model === CODEX_CLAUDE_UPSTREAM ? { anthropic: anthropicFacts(req.body) } : {}),
  };
}

function anthropicFacts(body: Json): NonNullable<UpstreamCall['anthropic']> {
  const blocks: Json[] = messagesOf(body).flatMap((m) => (Array.isArray(m?.content) ? m.content : []));
  const of = (type: string, field: string) => blocks.filter((b) => b?.type === type).map((b) => String(b[field]));
  return { thinking: body.thinking ?? null, cacheControl: body.cache_control ?? null, thinkingSignatures: of('thinking', 'signature'), toolUseIds: of('tool_use', 'id'), toolResultIds: of('tool_result', 'tool_use_id') };
}

/**
 * Claude (the Anthropic mock) asked by Codex: an exec_command call (after its thinking, when thinking is on)
 * while the request offers it and carries no tool result yet; undefined otherwise (the mock's default then
 * answers the tool result in text, after checking the echoed thinking's signature).
 */
function execToolUse(req: ReceivedRequest): MockReply | undefined {
  const body = req.body as Json;
  if (body?.model !== CODEX_CLAUDE_UPSTREAM) return undefined;
  const offered = Array.isArray(body.tools) && body.tools.some((tool: Json) => tool?.name === 'exec_command');
  if (!offered || anthropicFacts(body).toolResultIds.length > 0) return undefined;
  const usage = anthropicUsageFor(body);
  const thinking = body.thinking?.type === 'adaptive' || body.thinking?.type === 'enabled';
  const content: Json[] = [
    ...(thinking ? [{ type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) }] : []),
    { type: 'tool_use', id: TOOL_USE_ID, name: 'exec_command', input: { cmd: TOOL_COMMAND } },
  ];
  const message = { id: 'msg_codex_exec_1', type: 'message', role: 'assistant', model: body.model, content, stop_reason: 'tool_use', stop_sequence: null, usage };
  if (body.stream !== true) return { json: message };
  const events: Json[] = [{ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }];
  content.forEach((block, index) => {
    if (block.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage });
  events.push({ type: 'message_stop' });
  return { sse: events.map((event) => ({ event: String(event.type), data: JSON.stringify(event) })) };
}

/** A chat request's tool messages: the call each answers and its text (a string, or the text of its parts). */
function toolResultsOf(body: Json): Array<{ id: string; text: string }> {
  const textOf = (content: Json): string => (typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: Json) => (typeof p?.text === 'string' ? p.text : '')).join('') : '');
  return messagesOf(body).flatMap((m) => (m?.role === 'tool' ? [{ id: String(m.tool_call_id), text: textOf(m.content) }] : []));
}

/** The command the chat model asks Codex to run, and the call's id. */
const TOOL_COMMAND = 'echo tollgate-tool-ran';
const TOOL_CALL_ID = 'call_codex_exec_1';
const TOOL_USE_ID = 'toolu_codex_exec_1';

/** A chat answer calling exec_command when the request offers it and carries no tool result yet. */
function execCall(req: ReceivedRequest): MockReply | undefined {
  const body = req.body as Json;
  const offered = Array.isArray(body?.tools) && body.tools.some((tool: Json) => tool?.function?.name === 'exec_command');
  if (!offered || messagesOf(body).some((m) => m?.role === 'tool')) return undefined;
  const spec = { model: body.model, usage: defaultUsageFor(body), toolCalls: [{ id: TOOL_CALL_ID, name: 'exec_command', arguments: { cmd: TOOL_COMMAND } }] };
  return body.stream === true ? sseFromChunks(chatChunks({ ...spec, usageMode: body.stream_options?.include_usage ? 'final-chunk' : 'none' })) : { json: chatCompletion(spec) };
}

/** The chat upstream model behind CLAUDE_CHAT_MODEL, and the Bash call it makes Claude Code run (an id chat and Messages both accept). */
const CLAUDE_CHAT_UPSTREAM = 'Qwen/Qwen3-Coder-480B-A35B-Instruct';
const BASH_CALL_ID = 'call_claude_bash_1';
/** Prints `tollgate-tool-ran`, a text the command itself does not contain: only a run of it puts that in the tool result. */
const BASH_COMMAND = "printf 'tollgate-tool-%s\\n' ran";

/** A chat answer calling Claude Code's Bash tool when the request offers it and carries no tool result yet. */
function bashCall(req: ReceivedRequest): MockReply | undefined {
  const body = req.body as Json;
  const offered = Array.isArray(body?.tools) && body.tools.some((tool: Json) => tool?.function?.name === 'Bash');
  if (!offered || messagesOf(body).some((m) => m?.role === 'tool')) return undefined;
  const call = { id: BASH_CALL_ID, name: 'Bash', arguments: { command: BASH_COMMAND, description: 'Print the Tollgate marker' } };
  const spec = { model: body.model, usage: defaultUsageFor(body), toolCalls: [call] };
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

/**
 * Codex on Claude: the README's config.toml with `model` set to the Claude model, without `web_search =
 * "disabled"` (its "Codex on Claude" says it is not needed), plus the reasoning effort it suggests so Claude thinks.
 */
const codexClaude = (anthropic: MockAnthropic): Agent => ({
  name: 'codex-claude',
  upstream: anthropic,
  command: (bins, gw, secret, home) => {
    const { config: base, keyVariable } = codexConfigFor(gw);
    const config = base
      .replace(/^model = ".*"$/m, `model = "${CODEX_CLAUDE_MODEL}"\nmodel_reasoning_effort = "medium"\nmodel_supports_reasoning_summaries = true`)
      .replace(/^web_search = .*\n/m, '');
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'config.toml'), config);
    return { file: process.execPath, args: [bins.codexScript, 'exec', '--skip-git-repo-check', PROMPT], env: { ...baseEnv(home), [keyVariable]: secret }, setup: config };
  },
});

/**
 * Claude Code on the chat-only model: the README's variables with both model names set to it (its "Claude
 * Code on a chat-only model": nothing else changes), and `--allowedTools Bash` so that `-p`, which never
 * prompts, may run the Bash call the model makes.
 */
const claudeChat = (chat: MockUpstream): Agent => ({
  name: 'claude-chat',
  upstream: chat,
  command: (bins, gw, secret, home) => {
    const models = { ANTHROPIC_MODEL: CLAUDE_CHAT_MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL: CLAUDE_CHAT_MODEL };
    return {
      file: bins.claude,
      args: ['-p', 'Run the marker command and tell me what it printed', '--allowedTools', 'Bash'],
      env: { ...baseEnv(home), ...claudeEnvFor(gw, secret), ...models, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
      setup: Object.entries({ ...claudeEnvFor(gw, '<key>'), ...models }).map(([name, value]) => `${name}=${value}`).join(' '),
    };
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
    anthropic.handle(noteUsage(reported, (req) => execToolUse(req) ?? anthropicDefault(anthropic, req)));
    responses.handle(noteUsage(reported, (req) => mockDefault(responses, req)));
    // A call of Codex's exec_command (a harmless echo) until a tool result comes back, then the mock's default text.
    // For Claude Code, a call of its Bash tool (the same echo) until the tool result comes back.
    chat.handle(noteUsage(reported, (req) => execCall(req) ?? bashCall(req) ?? defaultReply(req)));
    // At debug, every request the CLIs make is logged (HEAD / included), never a header or a body.
    gw = await startGateway({ config: config(anthropic, responses, chat), env: { TOLLGATE_LOG_LEVEL: 'debug' } });
    const keys: string[] = [];
    const runs: AgentRun[] = [];
    for (const agent of AGENTS(anthropic, responses)) {
      for (const balance of [FUNDED, BROKE]) runs.push(await runAgent(agent, balance, bins, gw, reported, keys));
      if (agent.name === 'claude') runs.push(await runAgent(agent, CLAMPED, bins, gw, reported, keys, CLAMP_ENV));
    }
    runs.push(await runAgent(codexChat(chat), FUNDED, bins, gw, reported, keys));
    runs.push(await runAgent(codexClaude(anthropic), FUNDED, bins, gw, reported, keys));
    runs.push(await runAgent(claudeChat(chat), FUNDED, bins, gw, reported, keys));
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
