// The settlement decision as a table: what happened to a request (its facts) → release, exact or estimate,
// with the status and the error its row records. One row per case of docs/architecture.md's list; the
// charges these decisions lead to are pinned end to end by settlement-matrix.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { TokenUsage } from '../../../src/billing/pricing.js';
import { GatewayError } from '../../../src/errors.js';
import { decideSettlement, type Settlement, type SettlementFacts } from '../../../src/pipeline/settlement.js';
import { incompleteStreamError } from '../../../src/pipeline/upstream-error.js';

const INPUT = 40;
const USAGE: TokenUsage = { input: 37, cachedInput: 5, output: 12, reasoning: 2 };
const upstreamError = new GatewayError('upstream_error', { message: 'The upstream failed: boom.' });
const holdLost = new GatewayError('insufficient_balance', { message: 'the hold was lost' });
const internal = new GatewayError('internal_error');
const estimate = (output: number): TokenUsage => ({ input: INPUT, cachedInput: 0, output, reasoning: 0 });
/** Anthropic's message_start counts, canonical: 1,000 cache reads and 300 1-hour writes inside the input. */
const REPORTED_INPUT: TokenUsage = { input: 1321, cachedInput: 1000, output: 0, reasoning: 0, cacheWrite: 300, cacheWrite1h: 300 };
const delivered = (n: number) => () => n;
const streamed = (over: Partial<Extract<SettlementFacts, { phase: 'streamed' }>>): SettlementFacts => ({
  phase: 'streamed',
  clientGone: false,
  holdLost: undefined,
  failure: undefined,
  completed: true,
  sawOutput: true,
  sawFinish: true,
  usage: USAGE,
  delivered: delivered(9),
  ...over,
});
const beforeOutput = (over: Partial<Extract<SettlementFacts, { phase: 'before-output' }>>): SettlementFacts => ({
  phase: 'before-output',
  holdLost: undefined,
  clientGone: false,
  callRunning: false,
  failure: upstreamError,
  ...over,
});

const CASES: ReadonlyArray<readonly [string, SettlementFacts, Settlement]> = [
  ['before output, the hold was lost while a call ran: the input estimate, at the loss’s status', beforeOutput({ holdLost }), { kind: 'estimate', tokens: estimate(0), status: 402, failure: holdLost }],
  ['before output, the client left while a call ran: the input estimate, 499', beforeOutput({ clientGone: true, callRunning: true }), { kind: 'estimate', tokens: estimate(0), status: 499 }],
  ['before output, the client left between attempts: released, 499', beforeOutput({ clientGone: true }), { kind: 'release', status: 499 }],
  ['before output, every attempt failed: released at the failure’s status', beforeOutput({}), { kind: 'release', status: 502, failure: upstreamError }],
  ['a whole answer with usage: exact, 200', { phase: 'answered', usage: USAGE, delivered: delivered(9) }, { kind: 'exact', tokens: USAGE, status: 200 }],
  ['a whole answer without usage: the output counted, 200', { phase: 'answered', usage: null, delivered: delivered(9) }, { kind: 'estimate', tokens: estimate(9), status: 200 }],
  ['a stream that completed with usage: exact, 200', streamed({}), { kind: 'exact', tokens: USAGE, status: 200 }],
  ['a stream that completed without usage: the output delivered, 200', streamed({ usage: null }), { kind: 'estimate', tokens: estimate(9), status: 200 }],
  ['a stream whose client left, usage drained: exact, 499', streamed({ clientGone: true, completed: false }), { kind: 'exact', tokens: USAGE, status: 499 }],
  ['a stream whose client left, no usage: the output delivered, 499', streamed({ clientGone: true, usage: null }), { kind: 'estimate', tokens: estimate(9), status: 499 }],
  [
    'a stream that failed before any output: released at the failure’s status',
    streamed({ failure: { error: upstreamError, connectionDrop: false }, sawOutput: false, sawFinish: false, usage: null, completed: false }),
    { kind: 'release', status: 502, failure: upstreamError },
  ],
  [
    'a stream that failed after output, with usage: exact at the failure’s status',
    streamed({ failure: { error: upstreamError, connectionDrop: false }, sawFinish: false, completed: false }),
    { kind: 'exact', tokens: USAGE, status: 502, failure: upstreamError },
  ],
  [
    'a stream that failed after output, without usage: the output delivered at the failure’s status',
    streamed({ failure: { error: upstreamError, connectionDrop: true }, sawFinish: false, usage: null, completed: false }),
    { kind: 'estimate', tokens: estimate(9), status: 502, failure: upstreamError },
  ],
  [
    'a stream that stopped without its end or a finish: a broken connection, 502',
    streamed({ completed: false, sawFinish: false, usage: null }),
    { kind: 'estimate', tokens: estimate(9), status: 502, failure: incompleteStreamError() },
  ],
  ['a connection that dropped after the finish and the usage: a success', streamed({ failure: { error: upstreamError, connectionDrop: true } }), { kind: 'exact', tokens: USAGE, status: 200 }],
  [
    'the upstream’s own error after the finish and the usage: still the error',
    streamed({ failure: { error: upstreamError, connectionDrop: false } }),
    { kind: 'exact', tokens: USAGE, status: 502, failure: upstreamError },
  ],
  ['a stream whose hold was lost: the lost hold’s error, the usage it had', streamed({ holdLost, usage: null }), { kind: 'estimate', tokens: estimate(9), status: 402, failure: holdLost }],
  ['a growing hold that could not grow: the output delivered, 200', { phase: 'cut', clientGone: false, delivered: 30 }, { kind: 'estimate', tokens: estimate(30), status: 200 }],
  [
    'a stream without final usage whose upstream reported its input first (message_start): that input, exactly, and the output delivered',
    streamed({ clientGone: true, usage: null, completed: false, sawFinish: false, knownInput: REPORTED_INPUT }),
    { kind: 'estimate', tokens: { ...REPORTED_INPUT, output: 9, reasoning: 0 }, status: 499 },
  ],
  [
    'a growing hold that could not grow, its upstream input reported: that input and the output delivered',
    { phase: 'cut', clientGone: false, delivered: 30, knownInput: REPORTED_INPUT },
    { kind: 'estimate', tokens: { ...REPORTED_INPUT, output: 30, reasoning: 0 }, status: 200 },
  ],
  ['a stream with its final usage: the usage, whatever input was reported first', streamed({ knownInput: REPORTED_INPUT }), { kind: 'exact', tokens: USAGE, status: 200 }],
  ['a growing hold that could not grow, client gone: the output delivered, 499', { phase: 'cut', clientGone: true, delivered: 30 }, { kind: 'estimate', tokens: estimate(30), status: 499 }],
  ['a bug before any upstream answered: released, 500', { phase: 'fault', served: false, delivered: delivered(0), heldOutput: 1000, failure: internal }, { kind: 'release', status: 500, failure: internal }],
  ['a bug after an upstream answered: the output delivered, 500', { phase: 'fault', served: true, delivered: delivered(25), heldOutput: 1000, failure: internal }, { kind: 'estimate', tokens: estimate(25), status: 500, failure: internal }],
  [
    'a bug whose output cannot even be read: the most output held (its price is the hold), 500',
    {
      phase: 'fault',
      served: true,
      delivered: () => {
        throw new RangeError('Invalid string length');
      },
      heldOutput: 1000,
      failure: internal,
    },
    { kind: 'estimate', tokens: estimate(1000), status: 500, failure: internal },
  ],
];

describe('decideSettlement', () => {
  for (const [title, facts, expected] of CASES) {
    test(title, () => {
      assert.deepEqual(decideSettlement(facts, INPUT), expected);
    });
  }
});
