// One abort signal per upstream attempt: fires when the client goes away or the attempt's total time
// limit passes. (A timed-out attempt must not abort the next one, so each gets its own controller.)
import { TotalTimeoutReason } from './transport.js';

export class AttemptSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onClientAbort = () => this.controller.abort(this.client.reason);

  constructor(
    private readonly client: AbortSignal,
    totalMs: number,
  ) {
    this.timer = setTimeout(() => this.controller.abort(new TotalTimeoutReason()), totalMs);
    if (client.aborted) this.controller.abort(client.reason);
    else client.addEventListener('abort', this.onClientAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.client.removeEventListener('abort', this.onClientAbort);
  }
}
