// The Gemini side of the stream replays (test/contract/replay.ts runs them): the target, the gemini
// adapter's translator, and recordings framed as Gemini sends them.
import { readFileSync } from 'node:fs';
import { geminiAdapter } from '../../src/providers/gemini/index.js';
import type { UpstreamTarget } from '../../src/providers/types.js';
import { testProvider, testTarget } from '../support/provider-fixture.js';
import { replayDigest, replayStream, type Replay, type TranslatorFactory } from './replay.js';

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

const geminiTranslator: TranslatorFactory = (target) => geminiAdapter.createChatStreamTranslator(target);

export function replayGemini(bytes: Buffer, splitAt: readonly number[] = []): Replay {
  return replayStream(bytes, splitAt, GEMINI_TARGET, geminiTranslator);
}

/** Comparable across runs: Gemini's tool-call ids are made up and `created` is the clock. */
export function geminiDigest(bytes: Buffer, splitAt: readonly number[] = []): string {
  return replayDigest(bytes, splitAt, GEMINI_TARGET, geminiTranslator, { madeUp: true });
}

/** A `*.chunks.txt` recording framed as Gemini sends it: `data: <line>\r\n\r\n`, no event names, no [DONE]. */
export function geminiFrames(path: string | URL): Buffer {
  const lines = readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  return Buffer.from(lines.map((line) => `data: ${line}\r\n\r\n`).join(''), 'utf8');
}
