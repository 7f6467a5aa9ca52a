// Replays recorded upstream bytes through the chat stream path as the gateway runs it
// (src/pipeline/upstream-stream.ts): bytes → the kind's frame decoder, push per read, end() at the end →
// the chat API's ClientStream per event (the production class: the adapter's translator — OpenAI's by
// default, see TranslatorFactory — its meter, and the client-facing frames). No network, no timers.
import { readFileSync } from 'node:fs';
import { ChatClientStream } from '../../src/api/openai-chat/stream.js';
import { frameDecoder } from '../../src/providers/framing/index.js';
import { OpenAIChatStreamTranslator } from '../../src/providers/openai/stream.js';
import type { ChatStreamTranslator, JsonObject, ReportedUsage, UpstreamTarget } from '../../src/providers/types.js';
import { testCompatibleProvider, testTarget } from '../support/provider-fixture.js';

export const CLIENT_MODEL = 'client-model';

export const TARGET: UpstreamTarget = testTarget({ provider: testCompatibleProvider(), upstreamModel: 'up', clientModel: CLIENT_MODEL });

/** Makes the stream translator a replay feeds (an adapter's createChatStreamTranslator); the OpenAI one by default. */
export type TranslatorFactory = (target: UpstreamTarget) => ChatStreamTranslator;

const openAITranslator: TranslatorFactory = (target) => new OpenAIChatStreamTranslator(target);

export interface Replay {
  /** The chunks the client receives, parsed back from the exact SSE text the gateway writes. */
  readonly chunks: JsonObject[];
  /** The client-facing SSE text of those chunks (before the gateway's own usage chunk and [DONE]). */
  readonly wire: string;
  readonly usage: ReportedUsage | null;
  readonly finished: boolean;
  readonly id: string;
  readonly created: number;
  /** Upstream SSE events the decoder produced (including [DONE] and swallowed ones). */
  readonly events: number;
  /** What the client stream's meter saw. */
  readonly meter: { readonly sawOutput: boolean; readonly sawFinish: boolean; tokens(): number };
}

/**
 * Feeds `bytes` to a fresh decoder and translator, one push per piece: `splitAt` lists the offsets where
 * one upstream read ends and the next begins (sorted, strictly inside the buffer; none = one read).
 */
export function replayStream(
  bytes: Buffer,
  splitAt: readonly number[] = [],
  target: UpstreamTarget = TARGET,
  createTranslator: TranslatorFactory = openAITranslator,
): Replay {
  const run = pump(bytes, splitAt, target, createTranslator);
  return { ...run, chunks: parseClientSse(run.wire) };
}

/** Options for replayDigest. */
export interface DigestOptions {
  /**
   * The translator makes up `created` (the clock) and maybe tool-call ids (random `call_<hex>`), as the
   * Anthropic and Gemini ones do: compare with `created` zeroed and those ids numbered in order of appearance.
   */
  readonly madeUp?: boolean;
}

/**
 * A compact, order-sensitive fingerprint of everything a replay produced (client SSE text, usage, end
 * marker, id, created, event count), for split-equivalence checks without re-parsing the output.
 */
export function replayDigest(
  bytes: Buffer,
  splitAt: readonly number[] = [],
  target: UpstreamTarget = TARGET,
  createTranslator: TranslatorFactory = openAITranslator,
  { madeUp = false }: DigestOptions = {},
): string {
  const r = pump(bytes, splitAt, target, createTranslator);
  const wire = madeUp ? withMadeUpFieldsNumbered(r.wire) : r.wire;
  const created = madeUp ? 0 : r.created;
  return `${wire}\u0000${JSON.stringify(r.usage)}\u0000${r.finished}\u0000${r.id}\u0000${created}\u0000${r.events}`;
}

function withMadeUpFieldsNumbered(wire: string): string {
  const ids = new Map<string, string>();
  const number = (id: string): string => {
    if (!ids.has(id)) ids.set(id, `call_#${ids.size + 1}`);
    return ids.get(id)!;
  };
  return wire.replace(/call_[0-9a-f]{32}/g, number).replace(/"created":\d+/g, '"created":0');
}

function pump(bytes: Buffer, splitAt: readonly number[], target: UpstreamTarget, createTranslator: TranslatorFactory): Omit<Replay, 'chunks'> {
  const decoder = frameDecoder('sse');
  const translator = createTranslator(target);
  const client = new ChatClientStream(translator, target.clientModel, 'req_replay');
  let wire = '';
  let events = 0;
  const forward = (batch: readonly { event: string | undefined; data: string }[]): void => {
    for (const event of batch) {
      events++;
      wire += client.push(event);
    }
  };
  let start = 0;
  for (const offset of splitAt) {
    if (offset <= start || offset >= bytes.length) throw new RangeError(`bad split offset ${offset}`);
    forward(decoder.push(bytes.subarray(start, offset)));
    start = offset;
  }
  forward(decoder.push(bytes.subarray(start)));
  forward(decoder.end());
  return {
    wire,
    usage: translator.usage,
    finished: translator.finished,
    id: translator.id,
    created: translator.created,
    events,
    meter: { sawOutput: client.sawOutput, sawFinish: client.sawFinish, tokens: () => client.delivered() },
  };
}

/** Reads the gateway's client-facing `data: <json>\n\n` frames back into objects. */
export function parseClientSse(wire: string): JsonObject[] {
  if (wire === '') return [];
  const frames = wire.split('\n\n');
  if (frames.pop() !== '') throw new Error('client SSE does not end with a blank line');
  return frames.map((frame) => {
    if (!frame.startsWith('data: ') || frame.includes('\n')) throw new Error(`unexpected client SSE frame: ${frame.slice(0, 80)}`);
    return JSON.parse(frame.slice('data: '.length)) as JsonObject;
  });
}

/**
 * A `*.chunks.txt` recording (one JSON payload per line, maybe without a trailing newline) framed as an
 * OpenAI server sends it: `data: <line>\n\n` for each, then `data: [DONE]\n\n` (unless `done` is false,
 * for a stream that stops without its end marker). The payload bytes are kept exactly as recorded.
 */
export function framesFromChunksFile(path: string | URL, { done = true }: { done?: boolean } = {}): Buffer {
  const lines = readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  const frames = lines.map((line) => `data: ${line}\n\n`).join('');
  return Buffer.from(done ? `${frames}data: [DONE]\n\n` : frames, 'utf8');
}

/** The offsets just after each blank line that ends an SSE event (`\n\n` or `\r\n\r\n`), plus the end. */
export function frameEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i] === 0x0a && (bytes[i - 1] === 0x0a || (bytes[i - 1] === 0x0d && bytes[i - 2] === 0x0a))) ends.push(i + 1);
  }
  if (ends.at(-1) !== bytes.length) ends.push(bytes.length);
  return ends;
}

/** Offsets that fall inside a multi-byte UTF-8 character (between its lead byte and its last byte). */
export function offsetsInsideUtf8Characters(bytes: Buffer): number[] {
  const offsets: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    const byte = bytes[i] ?? 0;
    if ((byte & 0xc0) === 0x80) offsets.push(i);
  }
  return offsets;
}

/** Every offset 1..length-1: one byte per push. */
export function everyOffset(length: number): number[] {
  return Array.from({ length: Math.max(length - 1, 0) }, (_, i) => i + 1);
}
