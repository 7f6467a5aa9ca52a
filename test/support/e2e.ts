// Shared plumbing for the end-to-end tests (test/e2e/): one mock upstream + one real gateway process per
// file, raw HTTP and SSE helpers, and the checks every answer must pass. Ledger and usage-row checks: ledger-check.ts.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { mockConfig, startGateway, stopGateway, type CliResult, type CreatedKey, type GatewayProcess } from './gateway-process.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';
import { chatCostNano, usdToNano } from './money.js';
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

/**
 * Closes the mock first (in-flight upstream calls then fail at once instead of holding the gateway's
 * shutdown), then stops the gateway (SIGKILL after 10 s) and removes its directory. Either may be missing.
 */
export async function stopE2E(e: Partial<E2E> | undefined): Promise<void> {
  try {
    await e?.mock?.close();
  } finally {
    if (e?.gw) await stopGateway(e.gw, 10_000);
  }
}

/** startE2E on mockConfig, then one key (made with the CLI) and an SDK client that uses it. */
export async function startE2EWithKey(key: { name: string; balance: number }): Promise<{ e: E2E; key: CreatedKey; client: OpenAI }> {
  const e = await startE2E();
  try {
    const created = await e.gw.createKey(key);
    return { e, key: created, client: sdk(e.gw, created.key) };
  } catch (error) {
    await stopE2E(e);
    throw error;
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

// ---------------------------------------------------------------- usage.cost

/** `usage.cost` of a response or final chunk, in nano-dollars (asserting it is there and a number). */
export function costOf(usage: unknown): number {
  assert.ok(usage && typeof usage === 'object', 'usage is an object');
  const cost = (usage as { cost?: unknown }).cost;
  assert.equal(typeof cost, 'number', 'usage.cost is a number (USD)');
  return usdToNano(cost as number);
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

// ---------------------------------------------------------------- CLI output and polling

/** Parses a `--json` command's stdout: exactly one JSON document and nothing else. */
export function parseJsonOutput<T = Json>(result: CliResult, what: string): T {
  assert.equal(result.code, 0, `${what} exits 0 (stderr: ${result.stderr})`);
  try {
    return JSON.parse(result.stdout) as T;
  } catch (error) {
    assert.fail(`${what}: stdout is not one JSON document: ${(error as Error).message}\n${result.stdout}`);
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
