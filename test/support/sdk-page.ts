// A web page on its own origin that runs the real openai SDK in the browser, for the CORS tests: the SDK
// (the pinned devDependency) is bundled with esbuild into a temp directory at test time, and a small HTTP
// server on another port than the gateway's serves the page and the bundle, so every call the page makes
// to the gateway is cross-origin. The page exposes `window.tollgateSdk.chat(...)`, which reports what the
// SDK returned or threw as plain JSON (the test reads it through Playwright).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What the page's chat call reports: the answer and the response headers it could read, or the error. */
export type SdkChatResult =
  | { ok: true; content: string; model: string; chunks: number; headers: Record<string, string | null> }
  | { ok: false; error: string; status: number | null; code: string | null; message: string };

export interface SdkChatOptions {
  readonly baseURL: string;
  readonly apiKey: string;
  readonly stream: boolean;
  readonly maxTokens?: number;
  /** Extra request headers the SDK sends (X-Tollgate-*, Idempotency-Key ...). */
  readonly headers?: Record<string, string>;
  /** Response headers the page tries to read (null when the browser hides them). */
  readonly read?: readonly string[];
}

// The page's script, bundled with the SDK. Runs in the browser: no Node APIs.
const ENTRY = `
import OpenAI from 'openai';

async function chat(options) {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL, dangerouslyAllowBrowser: true, maxRetries: 0, timeout: 20000 });
  const params = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello from a browser' }], max_tokens: options.maxTokens ?? 20 };
  const read = (response) => Object.fromEntries((options.read ?? []).map((name) => [name, response.headers.get(name)]));
  try {
    if (!options.stream) {
      const { data, response } = await client.chat.completions.create(params, { headers: options.headers }).withResponse();
      return { ok: true, content: data.choices[0].message.content, model: data.model, chunks: 0, headers: read(response) };
    }
    const { data: stream, response } = await client.chat.completions.create({ ...params, stream: true }, { headers: options.headers }).withResponse();
    let content = '';
    let chunks = 0;
    let model = '';
    for await (const chunk of stream) {
      chunks += 1;
      model = chunk.model;
      content += chunk.choices[0]?.delta?.content ?? '';
    }
    return { ok: true, content, model, chunks, headers: read(response) };
  } catch (error) {
    const kind = error instanceof OpenAI.APIConnectionError ? 'APIConnectionError' : error instanceof OpenAI.APIError ? 'APIError' : 'Error';
    return { ok: false, error: kind, status: error.status ?? null, code: error.code ?? null, message: String(error.message) };
  }
}

window.tollgateSdk = { chat };
`;

const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>SDK page</title><script src="/sdk.js"></script></head><body>SDK page</body></html>';

/** Bundles the SDK page script once; returns its JavaScript. */
export async function bundleSdkPage(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sdk-page-'));
  try {
    const outfile = join(dir, 'sdk.js');
    await build({
      stdin: { contents: ENTRY, resolveDir: ROOT, sourcefile: 'sdk-page.js', loader: 'js' },
      outfile,
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      logLevel: 'warning',
    });
    return readFileSync(outfile, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface SdkPageServer {
  /** The page's origin, e.g. http://127.0.0.1:41234 (list it in server.cors_origins to allow it). */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves the page at / and the bundle at /sdk.js on a fresh loopback port. */
export async function startSdkPage(script: string): Promise<SdkPageServer> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/sdk.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else if (req.url === '/favicon.ico') res.writeHead(204).end(); // the browser asks; a 404 would count as a page problem
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
