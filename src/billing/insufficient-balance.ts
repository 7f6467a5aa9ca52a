// The 402 answer: how much the request would hold, what is available, and the largest max_tokens that
// would have fitted — so a client can retry with a smaller reservation instead of guessing.
import { GatewayError } from '../errors.js';
import { formatUsd, nanoToUsd, type Nano } from './money.js';
import { affordableMaxTokens, sizeChatHold, type CacheWriteHold, type PriceRates } from './pricing.js';

export interface HoldSizing {
  readonly rates: PriceRates;
  readonly inputTokens: number;
  /** The prompt's cache-write prefix, held at its write price (Anthropic Messages); absent: none. */
  readonly cacheWrite?: CacheWriteHold;
  readonly n: number;
  readonly hold: Nano;
  /** The model's max_output_tokens; undefined for embeddings (no output side). */
  readonly modelMaxOutput: number | undefined;
}

export function insufficientBalanceError(sizing: HoldSizing, available: Nano): GatewayError {
  const chat = sizing.modelMaxOutput !== undefined;
  const affordable = chat ? affordableMaxTokens(sizing.rates, sizing.inputTokens, sizing.n, available, sizing.modelMaxOutput!, sizing.cacheWrite) : 0;
  // The output reservation is the cause when a smaller max_tokens (at least 1) would have fitted.
  const inputFits = chat && affordable >= 1 && sizeChatHold(sizing.rates, sizing.inputTokens, 0, sizing.n, sizing.cacheWrite) <= available;
  const advice = inputFits
    ? `Lower max_tokens to ${affordable} or less, or top up the key.`
    : 'Top up the key.';
  return new GatewayError('insufficient_balance', {
    message: `Insufficient balance: this request needs a hold of $${formatUsd(sizing.hold)} but the key has $${formatUsd(Math.max(available, 0))} available. ${advice}`,
    param: inputFits ? 'max_tokens' : null,
    metadata: { hold: nanoToUsd(sizing.hold), available: nanoToUsd(available), affordable_max_tokens: affordable },
  });
}
