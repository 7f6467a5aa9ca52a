// Replays recorded Gemini SSE bytes through the stream path exactly as src/pipeline/chat-stream.ts runs it
// (bytes → SseDecoder.push per read, SseDecoder.end(), translator.onEvent per event, OutputMeter per chunk,
// each chunk serialised with the client-facing encoder), with the gemini adapter's translator.
import { readFileSync } from 'node:fs';
import { OutputMeter } from '../../src/pipeline/output-meter.js';
import { geminiAdapter } from '../../src/providers/gemini/index.js';
import type { JsonObject, ReportedUsage, UpstreamTarget } from '../../src/providers/types.js';
import { SseDecoder, type SseEvent } from '../../src/streaming/sse-decoder.js';
import { encodeSseData } from '../../src/streaming/sse-encoder.js';
import { testProvider, testTarget } from '../support/provider-fixture.js';
import { parseClientSse } from './replay.js';

export const GEMINI_CLIENT_MODEL = 'gemini-client-model';

export const GEMINI_TARGET: UpstreamTarget = testTarget({
  provider: testProvider({
    id: 'google',
    kind: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    origin: 'https://generativelanguage.googleapis.com',
    basePath: '',
    apiKey: 'test-goog-key',
  }),
  upstreamModel: 'gemini-3-pro-preview',
  clientModel: GEMINI_CLIENT_MODEL,
  maxOutputTokens: 65_536,
});

export interface GeminiReplay {
  readonly chunks: JsonObject[];
  readonly wire: string;
  readonly usage: ReportedUsage | null;
  readonly finished: boolean;
  readonly id: string;
  readonly created: number;
  readonly events: number;
  readonly meter: OutputMeter;
}

function pump(bytes: Buffer, splitAt: readonly number[]): Omit<GeminiReplay, 'chunks'> {
  const decoder = new SseDecoder();
  const translator = geminiAdapter.createChatStreamTranslator(GEMINI_TARGET);
  const meter = new OutputMeter();
  let wire = '';
  let events = 0;
  const forward = (batch: readonly SseEvent[]): void => {
    for (const event of batch) {
      events++;
      const chunk = translator.onEvent(event);
      if (chunk) {
        meter.observeChunk(chunk);
        wire += encodeSseData(chunk);
      }
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
  return { wire, usage: translator.usage, finished: translator.finished, id: translator.id, created: translator.created, events, meter };
}

export function replayGemini(bytes: Buffer, splitAt: readonly number[] = []): GeminiReplay {
  const run = pump(bytes, splitAt);
  return { ...run, chunks: parseClientSse(run.wire) };
}

/**
 * Everything a replay produced, made comparable across runs: tool-call ids are random and `created` is
 * the clock, so ids become call_#1, call_#2... in order of appearance and `created` becomes 0.
 */
export function geminiDigest(bytes: Buffer, splitAt: readonly number[] = []): string {
  const r = pump(bytes, splitAt);
  const ids = new Map<string, string>();
  const wire = r.wire
    .replace(/call_[0-9a-f]{32}/g, (id) => ids.get(id) ?? (ids.set(id, `call_#${ids.size + 1}`), `call_#${ids.size}`))
    .replace(/"created":\d+/g, '"created":0');
  return `${wire}\u0000${JSON.stringify(r.usage)}\u0000${r.finished}\u0000${r.id}\u0000${r.events}`;
}

/** A `*.chunks.txt` recording framed as Gemini sends it: `data: <line>\r\n\r\n`, no event names, no [DONE]. */
export function geminiFrames(path: string | URL): Buffer {
  const lines = readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  return Buffer.from(lines.map((line) => `data: ${line}\r\n\r\n`).join(''), 'utf8');
}
