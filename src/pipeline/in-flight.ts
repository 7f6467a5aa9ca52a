// Tracks requests still being served, so shutdown can wait for them to finish and settle before the
// database closes.

export class InFlightRequests {
  private readonly running = new Set<Promise<unknown>>();
  private idle: (() => void) | undefined;
  private idlePromise: Promise<void> | undefined;

  get size(): number {
    return this.running.size;
  }

  /** Returns `work` unchanged; remembers it until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const forget = () => {
      this.running.delete(work);
      if (this.running.size === 0 && this.idle) {
        this.idle();
        this.idle = undefined;
        this.idlePromise = undefined;
      }
    };
    work.then(forget, forget);
    return work;
  }

  /** Resolves once nothing is in flight. */
  drained(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    this.idlePromise ??= new Promise<void>((resolve) => (this.idle = resolve));
    return this.idlePromise;
  }
}
