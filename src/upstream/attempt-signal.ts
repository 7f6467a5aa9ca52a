// One abort signal per upstream attempt: fires when the attempt's total time limit passes, when the
// request is stopped (its bill lost the hold: AttemptStopper), or when the client goes away — unless the
// attempt may drain (keep reading for exact usage) instead. A timed-out attempt must not abort the next
// one, so each attempt gets its own controller.
import { TotalTimeoutReason } from './transport.js';

export interface DrainPermit {
  /** Asked once, when the client disconnects: true to keep reading the upstream; `cancel` ends it early. */
  tryStart(cancel: () => void): boolean;
  /** Called at dispose when tryStart returned true. */
  finish(cancel: () => void): void;
}

/** What else stops an attempt: the request's bill, when its hold is lost (RequestBill). */
export interface AttemptStopper {
  /** Set once stopped: the reason the attempt is aborted with. */
  readonly stopReason: unknown;
  addStopListener(listener: () => void): void;
  removeStopListener(listener: () => void): void;
}

export class AttemptSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly cancelDrain = () => this.controller.abort(this.client.reason);
  private readonly onStop = () => this.controller.abort(this.stop!.stopReason);
  private readonly onClientAbort = () => {
    if (this.drain?.tryStart(this.cancelDrain)) this.draining = true;
    else this.controller.abort(this.client.reason);
  };
  /** The client left and the attempt keeps reading to bill exactly. */
  draining = false;

  constructor(
    private readonly client: AbortSignal,
    totalMs: number,
    private readonly drain?: DrainPermit,
    private readonly stop?: AttemptStopper,
  ) {
    this.timer = setTimeout(() => this.controller.abort(new TotalTimeoutReason()), totalMs);
    if (client.aborted) this.controller.abort(client.reason);
    else client.addEventListener('abort', this.onClientAbort, { once: true });
    if (stop?.stopReason !== undefined) this.controller.abort(stop.stopReason);
    else stop?.addStopListener(this.onStop);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.client.removeEventListener('abort', this.onClientAbort);
    this.stop?.removeStopListener(this.onStop);
    if (this.draining) {
      this.draining = false;
      this.drain?.finish(this.cancelDrain);
    }
  }
}
