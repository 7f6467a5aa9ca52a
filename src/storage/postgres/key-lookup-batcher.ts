// Authentication reads on PostgreSQL, batched: the key lookups of the requests that arrive in one
// event-loop turn go as one query (one round trip for all, a busy key's hash asked once). Reads take no
// locks, so unlike the ledger's writes several batches may be in flight (up to MAX_IN_FLIGHT): a request
// never waits for another batch's round trip. A request is answered by a query sent after it arrived, so
// it never sees a key older than its own arrival (a revocation committed before it is always seen).
import { KEY_COLUMNS, KEY_FROM, type KeyRow } from '../rows.js';
import type { PostgresPool } from './connection.js';

interface Waiting {
  readonly resolve: (row: KeyRow | undefined) => void;
  readonly reject: (error: unknown) => void;
}

const LOOKUP_SQL = {
  name: 'keys-by-hash-v2',
  text: `SELECT ${KEY_COLUMNS}, k.secret_hash FROM ${KEY_FROM} WHERE k.secret_hash = ANY ($1::text[])`,
};

/** Lookup queries in flight at once (a pool connection each); more lookups wait for the next turn. */
const MAX_IN_FLIGHT = 4;

export class KeyLookupBatcher {
  private waiting = new Map<string, Waiting[]>();
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly pool: PostgresPool) {}

  lookup(secretHash: string): Promise<KeyRow | undefined> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(secretHash);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(secretHash, [{ resolve, reject }]);
      if (this.inFlight < MAX_IN_FLIGHT && !this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.inFlight >= MAX_IN_FLIGHT || this.waiting.size === 0) return;
    const batch = this.waiting;
    this.waiting = new Map();
    this.inFlight += 1;
    void this.run(batch).finally(() => {
      this.inFlight -= 1;
      this.flush();
    });
  };

  private async run(batch: Map<string, Waiting[]>): Promise<void> {
    try {
      const { rows } = await this.pool.query<KeyRow & { secret_hash: string }>({ ...LOOKUP_SQL, values: [[...batch.keys()]] });
      const byHash = new Map(rows.map((row) => [row.secret_hash, row]));
      for (const [hash, list] of batch) for (const w of list) w.resolve(byHash.get(hash));
    } catch (error) {
      for (const list of batch.values()) for (const w of list) w.reject(error);
    }
  }
}
