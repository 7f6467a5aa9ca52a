// Shared plumbing for the end-to-end tests (test/e2e/): one mock upstream + one real gateway process per
// file, raw HTTP and SSE helpers, and the billing checks every successful or failed request must pass.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import {
  BIN,
  TEST_PRICES,
  expectedCostNano,
  mockConfig,
  startGateway,
  type CliResult,
  type GatewayProcess,
  type KeyAudit,
} from './gateway-process.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';
import { assertMatchesSchema } from './openapi.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies and chunks are arbitrary JSON
export type Json = any;

export interface E2E {
  mock: MockUpstream;
  gw: GatewayProcess;
}

/** Starts the mock, then the gateway on `configFor(mock)` (mockConfig by default). */
export async function startE2E(configFor: (mock: MockUpstream) => string = (m) => mockConfig(m), env?: NodeJS.ProcessEnv): Promise<E2E> {
  const mock = await startMockUpstream();
  try {
    const gw = await startGateway({ config: configFor(mock), ...(env ? { env } : {}) });
    return { mock, gw };
  } catch (error) {
    await mock.close();
    throw error;
  }
}

/** Stops the gateway process (always), removes its directory and closes the mock. */
export async function stopE2E(e: E2E | undefined): Promise<void> {
  if (!e) return;
  try {
    const stopped = e.gw.stop();
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
    await Promise.race([stopped, timeout]);
    if (e.gw.child.exitCode === null && e.gw.child.signalCode === null) e.gw.child.kill('SIGKILL');
  } finally {
    e.gw.cleanup();
    await e.mock.close();
  }
}

/**
 * Adds YAML under the existing top-level `server:`, `providers:` and `models:` mappings of a mockConfig
 * text (the extra-YAML argument of mockConfig can only add new top-level keys). Each text is indented by
 * two spaces, as an entry of that mapping.
 */
export function extendConfig(base: string, add: { server?: string; providers?: string; models?: string }): string {
  let out = base;
  for (const section of ['server', 'providers', 'models'] as const) {
    const text = add[section];
    if (text === undefined) continue;
    const marker = `\n${section}:\n`;
    assert.ok(out.includes(marker), `config has a ${section}: section`);
    out = out.replace(marker, () => `${marker}${text.endsWith('\n') ? text : `${text}\n`}`);
  }
  return out;
}

/** A loopback port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function sdk(gw: GatewayProcess, apiKey: string): OpenAI {
  return new OpenAI({ apiKey, baseURL: gw.baseURL, maxRetries: 0, timeout: 20_000 });
}

// ---------------------------------------------------------------- money

/** USD (a JSON number) → nano-dollars. */
export const nano = (usd: number): number => Math.round(usd * 1e9);

/** Exact price in nano-dollars of chat usage at the test prices. */
export function chatCostNano(prompt: number, completion: number, cached = 0): number {
  return expectedCostNano({ prompt, completion, cached }, { input: TEST_PRICES.input, output: TEST_PRICES.output, cachedInput: TEST_PRICES.cachedInput });
}

/** Exact price in nano-dollars of embedding usage at the test price. */
export function embeddingCostNano(tokens: number): number {
  return expectedCostNano({ prompt: tokens, completion: 0 }, { input: TEST_PRICES.embedding });
}

/** `usage.cost` of a response or final chunk, in nano-dollars (asserting it is there and a number). */
export function costOf(usage: unknown): number {
  assert.ok(usage && typeof usage === 'object', 'usage is an object');
  const cost = (usage as { cost?: unknown }).cost;
  assert.equal(typeof cost, 'number', 'usage.cost is a number (USD)');
  return nano(cost as number);
}

// ---------------------------------------------------------------- raw HTTP

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

export interface CallOptions {
  key?: string;
  /** An object is sent as JSON; a string or bytes as-is. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A plain fetch to the gateway; `path` is relative to /v1 unless it starts with `//` (then to the origin). */
export async function call(gw: GatewayProcess, method: string, path: string, opts: CallOptions = {}): Promise<RawResponse> {
  const url = path.startsWith('//') ? `${gw.origin}${path.slice(1)}` : `${gw.baseURL}${path}`;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
  let body: string | Uint8Array | undefined;
  if (typeof opts.body === 'string' || opts.body instanceof Uint8Array) body = opts.body;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method, headers, body, signal: opts.signal ?? AbortSignal.timeout(20_000) });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** POST /v1/chat/completions as JSON. */
export const postChat = (gw: GatewayProcess, key: string, body: unknown, opts: Omit<CallOptions, 'key' | 'body'> = {}) =>
  call(gw, 'POST', '/chat/completions', { ...opts, key, body });

/** Asserts the 4-key error envelope (validated against ErrorResponse), the status and the code; returns `error`. */
export function assertErrorResponse(res: RawResponse, status: number, code: string | RegExp): Json {
  assert.equal(res.status, status, `status ${res.status} (body ${res.text})`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(res.headers.get('x-request-id'), 'x-request-id on the error response');
  assert.ok(res.json, `error body is JSON: ${res.text}`);
  assertMatchesSchema('ErrorResponse', res.json);
  assert.deepEqual(Object.keys(res.json), ['error']);
  for (const field of ['message', 'type', 'param', 'code']) assert.ok(field in res.json.error, `error.${field} present`);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.json.error.message.length > 0);
  assert.doesNotMatch(res.text, /\bat .+\.(?:js|ts):\d+/, 'no stack trace');
  if (typeof code === 'string') assert.equal(res.json.error.code, code);
  else assert.match(String(res.json.error.code), code);
  return res.json.error;
}

/**
 * A successful non-stream chat answer from a raw call: 200, x-request-id, valid against
 * CreateChatCompletionResponse, and usage.cost equal to the exact price of its own token counts.
 * Returns the charge in nano-dollars.
 */
export function assertChatOk(res: RawResponse, model: string): number {
  assert.equal(res.status, 200, `status ${res.status} (body ${res.text})`);
  assert.ok(res.headers.get('x-request-id'), 'x-request-id');
  assertMatchesSchema('CreateChatCompletionResponse', res.json);
  assert.equal(res.json.model, model);
  const usage = res.json.usage;
  const cost = costOf(usage);
  assert.equal(cost, chatCostNano(usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0), 'usage.cost prices the usage exactly');
  return cost;
}

// ---------------------------------------------------------------- SSE

/**
 * The `data:` payloads of a gateway SSE body, checking OpenAI framing: every event is `data: <one line>`
 * (comment lines allowed), events end with a blank line, and the last one is `data: [DONE]`.
 */
export function ssePayloads(raw: string): string[] {
  assert.ok(raw.endsWith('\n\n'), 'the stream ends on an event boundary');
  const payloads = raw
    .slice(0, -2)
    .split('\n\n')
    .flatMap((event) => {
      const lines = event.split('\n').filter((line) => !line.startsWith(':'));
      if (lines.length === 0) return [];
      assert.equal(lines.length, 1, `one data line per event: ${JSON.stringify(event)}`);
      assert.match(lines[0]!, /^data: /, `event is a data line: ${JSON.stringify(event)}`);
      return [lines[0]!.slice('data: '.length)];
    });
  assert.equal(payloads.at(-1), '[DONE]', 'the stream ends with data: [DONE]');
  assert.equal(payloads.filter((p) => p === '[DONE]').length, 1, 'exactly one [DONE]');
  return payloads;
}

export interface StreamRead {
  status: number;
  headers: Headers;
  requestId: string;
  /** Parsed JSON payloads before [DONE], each validated (chunks or error events). */
  events: Json[];
  /** The chat.completion.chunk events (no error events). */
  chunks: Json[];
  /** The error event, if the stream ended with one. */
  error: Json | undefined;
}

/** Validates each payload: chunks against CreateChatCompletionStreamResponse, error events against ErrorResponse. */
export function validateStreamEvents(payloads: string[]): Pick<StreamRead, 'events' | 'chunks' | 'error'> {
  const events = payloads.slice(0, -1).map((p) => JSON.parse(p) as Json);
  const chunks: Json[] = [];
  let error: Json;
  events.forEach((event, i) => {
    if (event && typeof event === 'object' && 'error' in event) {
      assertMatchesSchema('ErrorResponse', event);
      assert.equal(i, events.length - 1, 'an error event is the last event before [DONE]');
      error = event.error;
    } else {
      assertMatchesSchema('CreateChatCompletionStreamResponse', event);
      chunks.push(event);
    }
  });
  return { events, chunks, error };
}

/** POSTs a streaming chat request with fetch and reads the whole SSE body. */
export async function streamChat(gw: GatewayProcess, key: string, body: Record<string, unknown>): Promise<StreamRead> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal: AbortSignal.timeout(20_000),
  });
  const requestId = res.headers.get('x-request-id') ?? '';
  assert.ok(requestId, 'x-request-id on the stream response');
  const text = await res.text();
  assert.equal(res.status, 200, `stream status (body ${text})`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  return { status: res.status, headers: res.headers, requestId, ...validateStreamEvents(ssePayloads(text)) };
}

/** Exactly one `choices: []` chunk, the last one, carrying usage with cost; no other chunk carries usage. Returns it. */
export function finalUsageChunk(chunks: Json[], model: string): Json {
  const finals = chunks.filter((c) => Array.isArray(c.choices) && c.choices.length === 0);
  assert.equal(finals.length, 1, 'exactly one final choices: [] chunk');
  const final = chunks.at(-1);
  assert.equal(final, finals[0], 'the usage chunk is the last chunk');
  assert.ok(final.usage && typeof final.usage === 'object', 'the final chunk carries usage');
  costOf(final.usage);
  for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.usage === undefined || chunk.usage === null, 'only the final chunk carries usage');
  for (const chunk of chunks) {
    assert.equal(chunk.model, model, 'every chunk names the client model');
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(chunk.id, chunks[0].id, 'every chunk carries the same completion id');
    assert.equal(chunk.created, chunks[0].created, 'every chunk carries the same created time');
  }
  assert.ok(typeof final.id === 'string' && final.id !== '', 'the completion id is not empty');
  return final;
}

/** The concatenated delta.content of the chunks. */
export const streamedText = (chunks: Json[]): string =>
  chunks.map((c) => (c.choices as Json[]).map((ch) => (typeof ch.delta?.content === 'string' ? ch.delta.content : '')).join('')).join('');

// ---------------------------------------------------------------- ledger and usage

/** No active hold, nothing held, and the cached balance/held/spent equal the values derived from ledger entries. */
export function assertLedgerSettled(gw: GatewayProcess, keyId: string): KeyAudit {
  const audit = gw.audit(keyId);
  assert.equal(audit.activeHolds, 0, 'no active hold remains');
  assert.equal(audit.held, 0, 'nothing is held');
  assert.deepEqual({ balance: audit.balance, held: audit.held, spent: audit.spent }, audit.derived, 'cached balances == derived from entries');
  return audit;
}

/** The hold a request placed (from the database), if any. */
export function holdOf(gw: GatewayProcess, requestId: string): { amount: number; status: string } | undefined {
  const db = new Database(gw.dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT amount, status FROM holds WHERE request_id = ?').get(requestId) as { amount: number; status: string } | undefined;
  } finally {
    db.close();
  }
}

/** Ledger entry kinds written for a key (all requests), e.g. to prove no hold was ever placed. */
export function ledgerKinds(gw: GatewayProcess, keyId: string): string[] {
  const db = new Database(gw.dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT kind FROM ledger_entries WHERE key_id = ? ORDER BY id').all(keyId) as Array<{ kind: string }>).map((r) => r.kind);
  } finally {
    db.close();
  }
}

export interface UsageRowJson {
  request_id: string;
  time: string;
  key_id: string;
  model: string;
  provider: string;
  upstream_model: string;
  status: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: 'upstream' | 'estimated';
  attempts: Array<{ provider: string; status: number; duration_ms: number }>;
}

/** Parses a `--json` command's stdout: exactly one JSON document and nothing else. */
export function parseJsonOutput<T = Json>(result: CliResult, what: string): T {
  assert.equal(result.code, 0, `${what} exits 0 (stderr: ${result.stderr})`);
  try {
    return JSON.parse(result.stdout) as T;
  } catch (error) {
    assert.fail(`${what}: stdout is not one JSON document: ${(error as Error).message}\n${result.stdout}`);
  }
}

/** `tollgate usage --json --key ID`. */
export async function usageRows(gw: GatewayProcess, keyId: string): Promise<UsageRowJson[]> {
  const rows = parseJsonOutput<UsageRowJson[]>(await gw.cli(['usage', '--json', '--key', keyId]), 'usage --json');
  assert.ok(Array.isArray(rows));
  return rows;
}

export interface ExpectedRow {
  /** Names the case in failure messages (default: the request id). */
  label?: string;
  requestId: string;
  keyId: string;
  model: string;
  upstreamModel: string;
  provider?: string;
  /** The row's status (default 200); several values when the contract allows either. */
  status?: number | readonly number[];
  input?: number;
  output?: number;
  cached?: number;
  reasoning?: number;
  /** Exact cost in nano-dollars; omit to skip (estimated rows check bounds themselves). */
  costNano?: number;
  /** Default 'upstream'; 'any' when the contract leaves it open (failed requests). */
  source?: 'upstream' | 'estimated' | 'any';
  /** Expected attempt statuses, in order (default: [status]); 'any' checks only that each attempt names the provider. */
  attempts?: number[] | 'any';
}

/** Finds the row of `requestId` among `rows` and checks it field by field; returns it. */
export function assertUsageRow(rows: UsageRowJson[], exp: ExpectedRow): UsageRowJson {
  const matching = rows.filter((r) => r.request_id === exp.requestId);
  assert.equal(matching.length, 1, `exactly one usage row for ${exp.requestId}`);
  const row = matching[0]!;
  const provider = exp.provider ?? 'mock';
  const status = exp.status ?? 200;
  assert.equal(row.key_id, exp.keyId);
  assert.equal(row.model, exp.model);
  assert.equal(row.provider, provider);
  assert.equal(row.upstream_model, exp.upstreamModel);
  if (typeof status === 'number') assert.equal(row.status, status, 'status');
  else assert.ok(status.includes(row.status), `status ${row.status} is one of ${status.join(', ')}`);
  assert.ok(!Number.isNaN(Date.parse(row.time)), 'time is ISO 8601');
  if (exp.input !== undefined) assert.equal(row.input_tokens, exp.input, 'input_tokens');
  if (exp.output !== undefined) assert.equal(row.output_tokens, exp.output, 'output_tokens');
  assert.equal(row.cached_input_tokens, exp.cached ?? 0, 'cached_input_tokens');
  assert.equal(row.reasoning_tokens, exp.reasoning ?? 0, 'reasoning_tokens');
  if (exp.costNano !== undefined) assert.equal(nano(row.cost), exp.costNano, 'usage row cost');
  if (exp.source === 'any') assert.ok(['upstream', 'estimated'].includes(row.usage_source), 'usage_source');
  else assert.equal(row.usage_source, exp.source ?? 'upstream', 'usage_source');
  assert.ok(Array.isArray(row.attempts));
  if (exp.attempts === 'any') {
    assert.ok(row.attempts.length >= 1, 'at least one attempt');
    for (const a of row.attempts) assert.equal(a.provider, provider, 'attempt provider');
    for (const a of row.attempts) assert.ok(Number.isInteger(a.status), 'attempt status');
  } else {
    assert.deepEqual(
      row.attempts.map((a) => ({ provider: a.provider, status: a.status })),
      (exp.attempts ?? [status as number]).map((s) => ({ provider, status: s })),
      'attempts',
    );
  }
  for (const a of row.attempts) assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0, 'attempt duration_ms');
  return row;
}

/**
 * Cross-checks every usage row of a key against the ledger with one `usage --json` call: one row per
 * settled request, rows priced from their own token counts when the upstream reported usage (failed
 * requests: zero tokens, cost 0), estimated rows within their hold, and Σ row cost == ledger spent.
 */
export async function assertUsageAddsUp(gw: GatewayProcess, keyId: string, embeddingModels: readonly string[] = ['embed-test']): Promise<UsageRowJson[]> {
  const rows = await usageRows(gw, keyId);
  const audit = assertLedgerSettled(gw, keyId);
  assert.equal(rows.length, audit.usageRows, 'usage --json lists every usage row');
  assert.equal(new Set(rows.map((r) => r.request_id)).size, rows.length, 'one row per request');
  for (const row of rows) {
    const cost = nano(row.cost);
    if (row.usage_source === 'upstream') {
      const expected = embeddingModels.includes(row.model)
        ? embeddingCostNano(row.input_tokens)
        : chatCostNano(row.input_tokens, row.output_tokens, row.cached_input_tokens);
      assert.equal(cost, expected, `row ${row.request_id} is priced from its tokens`);
    } else {
      const hold = holdOf(gw, row.request_id);
      assert.ok(hold, `estimated row ${row.request_id} had a hold`);
      assert.ok(cost > 0 && cost <= hold.amount, `estimated row ${row.request_id}: 0 < ${cost} <= hold ${hold.amount}`);
    }
    if (row.status !== 200) assert.ok(row.usage_source === 'estimated' || cost === 0, `failed request ${row.request_id} with upstream source costs 0`);
  }
  assert.equal(
    rows.reduce((sum, r) => sum + nano(r.cost), 0),
    audit.spent,
    'the usage rows add up to what the ledger charged',
  );
  return rows;
}

/**
 * Usage-row expectations collected while a file's tests run and checked at the end with one
 * `tollgate usage --json --key ID` per key (each CLI run is a process start; one per request would
 * dominate the suite's time). Every failure is reported with its label.
 */
export class UsageExpectations {
  private readonly pending: Array<{ exp: ExpectedRow; extra: ((row: UsageRowJson) => void) | undefined }> = [];

  add(exp: ExpectedRow, extra?: (row: UsageRowJson) => void): void {
    this.pending.push({ exp, extra });
  }

  /** Checks every expected row and, per key, that the rows add up to the ledger (assertUsageAddsUp). */
  async verify(gw: GatewayProcess, keyIds: readonly string[]): Promise<void> {
    const unknown = this.pending.filter((p) => !keyIds.includes(p.exp.keyId));
    assert.deepEqual(unknown.map((p) => p.exp.label ?? p.exp.requestId), [], 'every expectation names a verified key');
    const failures: string[] = [];
    const rowsByKey = await Promise.all(keyIds.map((keyId) => assertUsageAddsUp(gw, keyId)));
    for (const [i, keyId] of keyIds.entries()) {
      const rows = rowsByKey[i]!;
      for (const { exp, extra } of this.pending.filter((p) => p.exp.keyId === keyId)) {
        try {
          const row = assertUsageRow(rows, exp);
          extra?.(row);
        } catch (error) {
          failures.push(`${exp.label ?? exp.requestId} (${exp.requestId}): ${(error as Error).message}`);
        }
      }
    }
    assert.deepEqual(failures, [], `usage rows that do not match:\n${failures.join('\n')}`);
    assert.ok(this.pending.length > 0, 'some rows were expected');
  }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then returns the last value). */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 3000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Runs the tollgate CLI in a chosen working directory (for ./tollgate.yaml and $TOLLGATE_CONFIG cases). */
export function runCliIn(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const inherited = { ...process.env };
    delete inherited.TOLLGATE_CONFIG; // only the caller decides whether it is set
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
