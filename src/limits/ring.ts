// A double-ended queue on a power-of-two ring: O(1) push at the tail, shift at the head and indexing,
// without the O(n) copy `Array.prototype.shift` does. The in-process limiter keeps each key's rolling
// window in one: admissions join at the tail in time order and leave at the head as they age out.
// It grows by doubling and shrinks by halving when a quarter full, so a burst's memory is given back.

const MIN_CAPACITY = 8;

export class Ring<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(MIN_CAPACITY);
  private head = 0;
  private mask = MIN_CAPACITY - 1;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    if (this.size > this.mask) this.resize((this.mask + 1) * 2);
    this.items[(this.head + this.size) & this.mask] = item;
    this.size += 1;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.size -= 1;
    const capacity = this.mask + 1;
    if (capacity > MIN_CAPACITY && this.size <= capacity / 4) this.resize(capacity / 2);
    return item;
  }

  /** The item `index` places from the oldest (0 ≤ index < length). */
  at(index: number): T {
    return this.items[(this.head + index) & this.mask] as T;
  }

  first(): T | undefined {
    return this.size === 0 ? undefined : this.items[this.head];
  }

  private resize(capacity: number): void {
    const next = new Array<T | undefined>(capacity);
    for (let i = 0; i < this.size; i++) next[i] = this.items[(this.head + i) & this.mask];
    this.items = next;
    this.head = 0;
    this.mask = capacity - 1;
  }
}
