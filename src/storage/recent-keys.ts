// The key rows this gateway read lately, by secret hash, for requests that may use a row up to a moment
// old (docs/adr/0027-recent-key-rows.md): chat and embeddings, whose hold re-checks the key's status and
// expiry in the database, so a key revoked or expired elsewhere is still refused at once. Only active rows
// are kept — an unknown or revoked secret is asked every time — and any change this process makes to a
// key forgets them all.
import type { KeyRecord } from './types.js';

/** The most rows kept; past it the oldest entry goes (a Map iterates in insertion order). */
const MAX_ROWS = 10_000;

interface Entry {
  readonly key: KeyRecord;
  readonly readAt: number;
}

export class RecentKeys {
  private rows = new Map<string, Entry>();
  /** Counts forgetAll() calls: a read that began before one must not be remembered after it. */
  private generation = 0;

  /** Pass to remember(): what this process had changed when a read began. */
  get currentGeneration(): number {
    return this.generation;
  }

  /** The key read for `secretHash` at most `maxAgeMs` before `now`, if any. */
  get(secretHash: string, maxAgeMs: number, now: number): KeyRecord | undefined {
    const entry = this.rows.get(secretHash);
    return entry && now - entry.readAt <= maxAgeMs ? entry.key : undefined;
  }

  /**
   * Remembers a key read at `readAt`, unless this process changed a key since the read began (`generation`)
   * — the row may predate the change. A revoked key is not kept: it would only ever be refused.
   */
  remember(secretHash: string, key: KeyRecord | undefined, readAt: number, generation: number): void {
    if (generation !== this.generation) return;
    if (!key || key.status !== 'active') {
      this.rows.delete(secretHash);
      return;
    }
    this.rows.delete(secretHash); // re-inserted last: the Map's order stays oldest first
    if (this.rows.size >= MAX_ROWS) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(secretHash, { key, readAt });
  }

  /** After this process changed a key: every later request reads the database again. */
  forgetAll(): void {
    this.generation += 1;
    this.rows.clear();
  }
}
