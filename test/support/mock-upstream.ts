// Scriptable mock OpenAI-compatible upstream for e2e tests, benchmarks and the quickstart (plain node:http, no framework).
import http from 'node:http';
import type net from 'node:net';
import { errorReply, formatSseEvent, isStreamReply, type MockReply, type RawSseReply, type SseReply } from './mock-builders.js';
import { defaultReply } from './mock-defaults.js';

export * from './mock-builders.js';
export { defaultReply, defaultUsageFor, defaultEmbeddingUsageFor, defaultEmbeddingFor, MOCK_MODELS, JSON_MODE_TEXT, TOOL_ARGUMENTS, toolResultText } from './mock-defaults.js';

export interface ReceivedRequest {
  method: string;
  /** Path without the query string, e.g. '/v1/chat/completions'. */
  path: string;
  /** The request target as received (path + query). */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body; undefined when empty or malformed. `any` so tests can read fields without casts. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  rawBody: string;
  /** The body's bytes as received (a byte-for-byte check of what a gateway forwarded). */
  rawBytes: Buffer;
  /** Date.now() when the request headers arrived (wall clock, comparable with the gateway process). */
  receivedAt: number;
  /** Date.now() when the client went away before the response finished, if it did. */
  abortedAt?: number;
}

/** Returns a reply to send, or void when it has dealt with `res` itself (destroyed it, stalled, ...). */
export type MockHandler = (req: ReceivedRequest, res: http.ServerResponse) => MockReply | void | Promise<MockReply | void>;
/** Anything that can answer a request: a fixed reply or a handler. */
export type ReplySource = MockReply | MockHandler;

/** The server core every mock shares: recording, scripting, connection tracking. */
export interface MockServer {
  /** 'http://HOST:PORT', no path. */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** Answer subsequent requests with this handler (or fixed reply); null restores the default behaviour. */
  handle(handler: ReplySource | null): void;
  /** Clears requests, closedConnections and the handler. */
  reset(): void;
  openConnections(): number;
  closedConnections: Array<{ openedAt: number; closedAt: number }>;
  close(): Promise<void>;
}

/** The mock OpenAI-compatible upstream. */
export interface MockUpstream extends MockServer {
  /** Base URL ending in /v1, e.g. 'http://127.0.0.1:PORT/v1'. */
  url: string;
}

export interface MockUpstreamOptions {
  port?: number;
  host?: string;
  /** Record requests (default true); turn off for benchmarks. */
  record?: boolean;
  /**
   * Without recording: answers what the OpenAI mock has no precomputed reply for (true), or passes
   * (false) — the benchmark's agent paths (mock-agent-replies.ts).
   */
  alsoAnswer?: (method: string, url: string, rawBody: string, res: http.ServerResponse) => boolean;
}

export interface MockServerOptions extends MockUpstreamOptions {
  /** The mock's default behaviour: the reply when no handler is set, and what the fault combinators
   * (inSequence, cutAfter, delayed, ...) fall back to on this server. */
  defaultReply: (req: ReceivedRequest) => MockReply;
  /** Writes the default reply itself (a faster path than defaultReply); defaultReply is sent otherwise. */
  fallback?: (req: ReceivedRequest, res: http.ServerResponse) => void;
  /**
   * Optional shortcut for requests that are neither recorded nor scripted (benchmarks): answers from the
   * raw request and returns true, or returns false to take the normal path.
   */
  fastPath?: (method: string, url: string, rawBody: string, res: http.ServerResponse) => boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

function parseJson(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- writing replies

/** Writes stream frames one by one, honouring the fault knobs. */
async function writeFrames(res: http.ServerResponse, frames: Array<string | Buffer>, reply: SseReply | RawSseReply): Promise<void> {
  const { delayMs = 0, cutAfter, stallAfter } = reply;
  const limit = Math.min(frames.length, cutAfter ?? Infinity, stallAfter ?? Infinity);
  for (let i = 0; i < limit; i++) {
    if (delayMs > 0 && i > 0) await sleep(delayMs);
    if (res.destroyed) return; // the client left; stop dripping
    res.write(frames[i]);
  }
  if (cutAfter !== undefined) {
    // end() flushes what was written, then FIN mid-body: the chunked body never terminates.
    const socket = res.socket;
    socket?.end(() => socket.destroy());
  } else if (stallAfter === undefined) {
    res.end();
  }
}

/** Sends a declarative reply. */
export async function sendReply(res: http.ServerResponse, reply: MockReply): Promise<void> {
  const status = reply.status ?? 200;
  if ('json' in reply || 'body' in reply) {
    const body = 'json' in reply ? JSON.stringify(reply.json) : reply.body;
    const type = 'json' in reply ? 'application/json' : 'text/plain; charset=utf-8';
    res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...reply.headers });
    res.end(body);
    return;
  }
  const frames = 'sse' in reply ? reply.sse.map(formatSseEvent) : Array.isArray(reply.rawSse) ? reply.rawSse : [reply.rawSse];
  res.writeHead(status, { ...SSE_HEADERS, ...reply.headers });
  res.flushHeaders(); // so clients see the headers before a slow or stalled first event
  await writeFrames(res, frames, reply);
}

// ---------------------------------------------------------------- the precomputed default path

/** A serialized default reply, split around the completion id so each request gets a fresh id cheaply. */
interface Prepared {
  status: number;
  contentType: string;
  parts: string[];
  sse: boolean;
}

const ID_TOKEN = 'chatcmpl-mock-@@ID@@';
const CACHE_MAX_ENTRIES = 256;
const CACHE_MAX_BODY = 16_384;
let sequence = 0;

function prepare(reply: MockReply): Prepared {
  const status = reply.status ?? 200;
  if ('sse' in reply) return { status, contentType: SSE_HEADERS['content-type'], parts: reply.sse.map(formatSseEvent).join('').split(ID_TOKEN), sse: true };
  if ('json' in reply) return { status, contentType: 'application/json', parts: JSON.stringify(reply.json).split(ID_TOKEN), sse: false };
  throw new Error('default replies are json or sse');
}

/**
 * Default replies keyed by method, target and raw body: a benchmark's repeated request is serialized once.
 * (So `created` is the time that body was first built; ids stay fresh via the split parts.)
 */
class PreparedCache {
  private readonly entries = new Map<string, Prepared>();

  static key(method: string, url: string, rawBody: string): string | undefined {
    return rawBody.length <= CACHE_MAX_BODY ? `${method} ${url}\n${rawBody}` : undefined;
  }

  get(key: string | undefined): Prepared | undefined {
    return key === undefined ? undefined : this.entries.get(key);
  }

  forRequest(req: ReceivedRequest): Prepared {
    const key = PreparedCache.key(req.method, req.url, req.rawBody);
    const hit = this.get(key);
    if (hit) return hit;
    const prepared = prepare(defaultReply(req, ID_TOKEN));
    if (key !== undefined) {
      if (this.entries.size >= CACHE_MAX_ENTRIES) this.entries.clear(); // bound memory for tests with many distinct bodies
      this.entries.set(key, prepared);
    }
    return prepared;
  }
}

function writePrepared(res: http.ServerResponse, prepared: Prepared): void {
  const n = (++sequence).toString(36);
  const body = prepared.parts.length === 1 ? prepared.parts[0]! : prepared.parts.join(`chatcmpl-mock-${n}`);
  if (prepared.sse) {
    // Chunked like OpenAI's streams (no content-length); one write keeps the default path cheap.
    res.writeHead(prepared.status, { 'content-type': prepared.contentType, 'cache-control': 'no-cache', 'x-request-id': `req_mock_${n}` });
    res.write(body);
    res.end();
  } else {
    res.writeHead(prepared.status, { 'content-type': prepared.contentType, 'content-length': String(Buffer.byteLength(body)), 'x-request-id': `req_mock_${n}` });
    res.end(body);
  }
}

// ---------------------------------------------------------------- the server

function failRequest(res: http.ServerResponse, err: unknown): void {
  console.error('mock upstream handler failed:', err);
  if (!res.headersSent) void sendReply(res, errorReply(500, `mock upstream handler failed: ${String(err)}`));
  else res.destroy();
}

async function runHandler(handler: ReplySource, req: ReceivedRequest, res: http.ServerResponse): Promise<void> {
  try {
    const reply = typeof handler === 'function' ? await handler(req, res) : handler;
    if (reply) await sendReply(res, reply);
  } catch (err) {
    failRequest(res, err);
  }
}

function displayHost(host: string): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return shown.includes(':') ? `[${shown}]` : shown;
}

/** Each request's server default, for the fault combinators (requests from other mocks than the OpenAI one). */
const defaultsOf = new WeakMap<ReceivedRequest, (req: ReceivedRequest) => MockReply>();

/** Starts a recording, scriptable node:http server answering with `defaultReply` unless a handler is set. */
export async function startMockServer(opts: MockServerOptions): Promise<MockServer> {
  const host = opts.host ?? '127.0.0.1';
  const record = opts.record !== false;
  const requests: ReceivedRequest[] = [];
  const closedConnections: Array<{ openedAt: number; closedAt: number }> = [];
  const sockets = new Set<net.Socket>();
  let handler: ReplySource | null = null;

  function onBody(req: http.IncomingMessage, res: http.ServerResponse, rawBytes: Buffer, receivedAt: number): void {
    const rawBody = rawBytes.toString('utf8');
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const current = handler;
    // Benchmark fast path: nothing to record or script.
    if (current === null && !record && opts.fastPath?.(method, url, rawBody, res)) return;
    const q = url.indexOf('?');
    const rec: ReceivedRequest = { method, path: q === -1 ? url : url.slice(0, q), url, headers: req.headers, body: parseJson(rawBody), rawBody, rawBytes, receivedAt };
    defaultsOf.set(rec, opts.defaultReply);
    if (record) {
      requests.push(rec);
      res.on('close', () => {
        if (!res.writableFinished) rec.abortedAt = Date.now();
      });
    }
    if (current !== null) {
      void runHandler(current, rec, res);
      return;
    }
    if (!opts.fallback) {
      void runHandler(opts.defaultReply, rec, res);
      return;
    }
    try {
      opts.fallback(rec, res);
    } catch (err) {
      failRequest(res, err);
    }
  }

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      onBody(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), receivedAt);
    });
  });

  server.on('connection', (socket: net.Socket) => {
    const openedAt = Date.now();
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closedConnections.push({ openedAt, closedAt: Date.now() });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  const port = (server.address() as net.AddressInfo).port;
  return {
    origin: `http://${displayHost(host)}:${port}`,
    port,
    requests,
    closedConnections,
    handle(next) {
      handler = next;
    },
    reset() {
      // Truncate in place so references tests hold stay live.
      requests.length = 0;
      closedConnections.length = 0;
      handler = null;
    },
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

export async function startMockUpstream(opts: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const cache = new PreparedCache();
  const server = await startMockServer({
    ...opts,
    defaultReply: (req) => defaultReply(req),
    fallback: (req, res) => writePrepared(res, cache.forRequest(req)),
    fastPath(method, url, rawBody, res) {
      const hit = cache.get(PreparedCache.key(method, url, rawBody));
      if (hit) writePrepared(res, hit);
      return hit !== undefined || (opts.alsoAnswer?.(method, url, rawBody, res) ?? false);
    },
  });
  return { ...server, url: `${server.origin}/v1` };
}

// ---------------------------------------------------------------- fault injection (composable handlers)

/** Resolves a source to a reply; no source means the default reply of the server the request came to. */
async function resolveSource(source: ReplySource | undefined, req: ReceivedRequest, res: http.ServerResponse): Promise<MockReply | void> {
  if (source === undefined) return (defaultsOf.get(req) ?? defaultReply)(req);
  return typeof source === 'function' ? source(req, res) : source;
}

/** Wraps a source, applying stream knobs to its reply (which must be a stream). */
function withStreamKnobs(name: string, knobs: Partial<SseReply>, source?: ReplySource): MockHandler {
  return async (req, res) => {
    const reply = await resolveSource(source, req, res);
    if (!reply) return;
    if (!isStreamReply(reply)) throw new Error(`${name}() needs a streaming reply (send stream: true, or pass an sse/rawSse reply)`);
    return { ...reply, ...knobs };
  };
}

/** Never answers; the socket stays open until the client gives up or the mock closes. */
export const stall = (): MockHandler => () => undefined;

/** Sends a TCP RST before any response headers. */
export const resetSocket = (): MockHandler => (_req, res) => {
  res.socket?.resetAndDestroy();
};

/** Sends n stream events, then closes the socket mid-body. */
export const cutAfter = (n: number, source?: ReplySource): MockHandler => withStreamKnobs('cutAfter', { cutAfter: n }, source);

/** Sends n stream events, then goes silent with the socket open. */
export const stallAfter = (n: number, source?: ReplySource): MockHandler => withStreamKnobs('stallAfter', { stallAfter: n }, source);

/** Drips stream events with a pause between each. */
export const slowDrip = (delayMs: number, source?: ReplySource): MockHandler => withStreamKnobs('slowDrip', { delayMs }, source);

/** Waits before answering at all (slow time-to-first-byte). */
export const delayed =
  (ms: number, source?: ReplySource): MockHandler =>
  async (req, res) => {
    await sleep(ms);
    return resolveSource(source, req, res);
  };

/** The nth request gets the nth source; once they run out, the default behaviour (e.g. fail twice, then succeed). */
export function inSequence(...sources: ReplySource[]): MockHandler {
  let next = 0;
  return (req, res) => resolveSource(sources[next++], req, res);
}
