// A committed stream's own word while its upstream is silent (ClientStream.keepAlive: Anthropic's `ping`
// after 15 s): a reasoning model may think for minutes before its next token, and clients, proxies and load
// balancers drop a connection that says nothing for that long. One timer per stream, re-armed only when it
// fires — a frame going out just moves a timestamp, so a fast stream pays nothing per read.

export class KeepAlive {
  private last: number;
  private timer: NodeJS.Timeout | undefined;

  /** `beat` writes the keep-alive frame; `now` is a monotonic clock in milliseconds (injectable for tests). */
  constructor(
    private readonly afterMs: number,
    private readonly beat: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.last = now();
    this.arm(afterMs);
  }

  /** A frame went to the client: its silence starts again. */
  heard(): void {
    this.last = this.now();
  }

  /** The stream is ending: nothing more is written. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    // Never what keeps a process alive: the stream's own reads do.
    this.timer.unref();
  }

  private check(): void {
    if (this.timer === undefined) return;
    const silent = this.now() - this.last;
    if (silent >= this.afterMs) {
      this.beat();
      this.last = this.now();
      this.arm(this.afterMs);
    } else {
      this.arm(this.afterMs - silent);
    }
  }
}
