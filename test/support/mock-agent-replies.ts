// The benchmark mock's answers to coding agents (`npm run bench -- --agents`): POST /v1/messages in
// Anthropic's wire format and POST /v1/responses in OpenAI's, as mock-anthropic.ts and mock-responses.ts
// frame them, but precomputed so the mock costs little beside the gateway it measures. Each is built once,
// from the first request of its path and mode (stream or not) — the Responses object echoes that
// request's tools, as OpenAI's does — and replayed with a fresh id. The model always answers in plain text
// (a thinking block or reasoning item first, as the recorded requests ask for one), never a tool call, so
// an agent's turn ends there.
import type http from 'node:http';
import { ANTHROPIC_TEXT, ANTHROPIC_THINKING, ANTHROPIC_UPSTREAM_HEADERS, anthropicStreamEvents, signatureFor } from './mock-anthropic.js';
import { formatSseEvent } from './mock-builders.js';
import { REASONING_SUMMARY, RESPONSES_TEXT, UPSTREAM_HEADERS, responseEvents, responseObject, sseOfEvents, makeResponsesUsage } from './mock-responses.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Stands for the id in a prepared reply; each answer gets its own in its place. */
const ID_TOKEN = '@@AGENT-ID@@';
/** Cheap enough on a 115 KB body; a `"stream": true` inside some nested value would fool it (not in any agent's body). */
const STREAM_TRUE = /"stream"\s*:\s*true/;

interface Prepared {
  readonly parts: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  readonly sse: boolean;
}

let sequence = 0;

function write(res: http.ServerResponse, prepared: Prepared): void {
  const body = prepared.parts.join((++sequence).toString(36).padStart(8, '0'));
  if (prepared.sse) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...prepared.headers });
    res.write(body);
    res.end();
  } else {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...prepared.headers });
    res.end(body);
  }
}

/** Messages: thinking when the request enables it, then the text; usage as mock-anthropic.ts reports it. */
function prepareMessages(body: Obj, stream: boolean): Prepared {
  // Without tools and history in what the plan sees: the mock would call the first tool, or answer a tool result.
  const { tools: _tools, tool_choice: _choice, ...rest } = body;
  const events = anthropicStreamEvents({ ...rest, messages: [{ role: 'user', content: 'Say hello' }] }) as Array<{ event: string; data: string }>;
  const start = (JSON.parse(events[0]!.data) as { message: Obj & { id: string } }).message;
  if (stream) return { parts: events.map(formatSseEvent).join('').split(start.id).join(`msg_${ID_TOKEN}`).split(ID_TOKEN), headers: ANTHROPIC_UPSTREAM_HEADERS, sse: true };
  // The whole Message: what the stream's events add up to.
  const final = JSON.parse(events.at(-2)!.data) as { usage: Obj };
  const thinking = isObj(body.thinking) && body.thinking.type === 'enabled';
  const message = {
    ...start,
    id: `msg_${ID_TOKEN}`,
    content: [...(thinking ? [{ type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) }] : []), { type: 'text', text: ANTHROPIC_TEXT }],
    stop_reason: 'end_turn',
    usage: { ...final.usage, service_tier: 'standard' },
  };
  return { parts: JSON.stringify(message).split(ID_TOKEN), headers: ANTHROPIC_UPSTREAM_HEADERS, sse: false };
}

/** Responses: a reasoning item (encrypted when the request includes it), then the message; the request's fields echoed. */
function prepareResponses(body: Obj, stream: boolean): Prepared {
  const include = Array.isArray(body.include) ? body.include : [];
  const output: Obj[] = [
    {
      id: `rs_${ID_TOKEN}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: REASONING_SUMMARY }],
      ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: `gAAAAB${Buffer.from('mock reasoning state').toString('base64')}` } : {}),
    },
    { id: `msg_${ID_TOKEN}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: RESPONSES_TEXT, annotations: [], logprobs: [] }] },
  ];
  const usage = makeResponsesUsage(30, 32, { reasoning: 20 });
  const id = `resp_${ID_TOKEN}`;
  const text = stream ? sseOfEvents(responseEvents(body, { id, output, usage })).map(formatSseEvent).join('') : JSON.stringify(responseObject(body, { id, output, usage, status: 'completed' }));
  return { parts: text.split(ID_TOKEN), headers: UPSTREAM_HEADERS, sse: stream };
}

/**
 * A fast path for the OpenAI mock (startMockUpstream's `alsoAnswer`): answers POST /v1/messages and
 * /v1/responses (any query string) and returns true; false for anything else.
 */
export function agentReplies(): (method: string, url: string, rawBody: string, res: http.ServerResponse) => boolean {
  const prepared = new Map<string, Prepared>();
  return (method, url, rawBody, res) => {
    if (method !== 'POST') return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path !== '/v1/messages' && path !== '/v1/responses') return false;
    const stream = STREAM_TRUE.test(rawBody);
    const key = `${path} ${stream}`;
    let reply = prepared.get(key);
    if (!reply) {
      const body = JSON.parse(rawBody) as unknown;
      if (!isObj(body)) return false;
      reply = path === '/v1/messages' ? prepareMessages(body, stream) : prepareResponses(body, stream);
      prepared.set(key, reply);
    }
    write(res, reply);
    return true;
  };
}
