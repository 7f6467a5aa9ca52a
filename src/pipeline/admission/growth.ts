// Growing holds (billing.hold_mode: growing, product.md §13, ADR 0020): a stream's hold covers one step
// of output per choice at first and grows by a step whenever the output reaches what it covers — each
// step admitted atomically like a new hold, so balances, budgets and concurrency compose. When the key
// cannot cover the next step, the stream must end (finish_reason "length").
import { sizeOutputStep, type PriceRates } from '../../billing/pricing.js';
import type { Reservation } from './reservation.js';

export class OutputGrowth {
  private coveredPerChoice: number;

  constructor(
    private readonly reservation: Pick<Reservation, 'grow'>,
    private readonly rates: PriceRates,
    private readonly inputTokens: number,
    readonly n: number,
    private readonly step: number,
    /** The request's max output per choice: a hold never grows past it. */
    private readonly maxOutput: number,
  ) {
    this.coveredPerChoice = Math.min(step, maxOutput);
  }

  /** Output tokens (all choices) the first hold covers: the request's initial hold is sized for this many per choice. */
  static initialOutput(step: number, maxOutput: number): number {
    return Math.min(step, maxOutput);
  }

  /** Makes the hold cover `outputTokens` (all choices together); false when the key cannot: end the stream. */
  async cover(outputTokens: number): Promise<boolean> {
    while (outputTokens > this.coveredPerChoice * this.n) {
      // All of max_tokens is held: output beyond it is the documented overage of a miscount, not a reason to cut.
      if (this.coveredPerChoice >= this.maxOutput) return true;
      const add = Math.min(this.step, this.maxOutput - this.coveredPerChoice);
      if (!(await this.reservation.grow(sizeOutputStep(this.rates, this.inputTokens, add, this.n)))) return false;
      this.coveredPerChoice += add;
    }
    return true;
  }
}
