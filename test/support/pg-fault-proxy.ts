// A TCP proxy in front of PostgreSQL that cuts the connection carrying the ledger's batch statement, at
// a chosen moment: before the batch reaches the server (it never ran), or after the server answered
// (it committed, the answer is lost). The group commit must then fail or retry each of the batch's
// requests exactly once (src/storage/postgres/ledger-batcher.ts). It can also take the whole database
// away (every connection dropped, the port closed) and bring it back on the same port.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { BATCH_STATEMENT_NAME } from '../../src/storage/postgres/ledger-batcher.js';

/** The bytes that name the batch statement in every Parse and Bind message that runs it. */
const BATCH_MARKER = Buffer.from(BATCH_STATEMENT_NAME);
/** ReadyForQuery (idle): the server finished the statement and committed its transaction. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

export type Cut = 'before-request' | 'after-answer';

export interface PgFaultProxy {
  /** `url` with the host and port of the proxy. */
  urlFor(url: string): string;
  /** Cuts the next `times` batch statements at `when` (one cut per statement). */
  arm(when: Cut, times?: number): void;
  /** Batch statements seen and cuts made so far. */
  readonly stats: { batches: number; cuts: number };
  /** Drops every connection and stops listening: connecting is refused (ECONNREFUSED), as a database gone away. */
  takeDown(): Promise<void>;
  /** Listens again on the same port. */
  bringBack(): Promise<void>;
  close(): Promise<void>;
}

export async function startPgFaultProxy(target: string): Promise<PgFaultProxy> {
  const { hostname, port } = new URL(target);
  const stats = { batches: 0, cuts: 0 };
  const armed: Cut[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((client) => {
    const upstream = connect(Number(port || 5432), hostname);
    sockets.add(client).add(upstream);
    let cutAfterAnswer = false;
    let answer = Buffer.alloc(0);
    const cut = () => {
      stats.cuts += 1;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (data: Buffer) => {
      if (data.includes(BATCH_MARKER)) {
        stats.batches += 1;
        const when = armed.shift();
        if (when === 'before-request') return cut();
        if (when === 'after-answer') cutAfterAnswer = true;
      }
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (!cutAfterAnswer) return void client.write(data);
      // Withheld until the server says it is done (committed), then dropped with the connection.
      answer = Buffer.concat([answer, data]);
      if (answer.includes(READY_FOR_QUERY)) cut();
    });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.on('error', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const proxyPort = typeof address === 'object' && address ? address.port : 0;
  return {
    urlFor(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(proxyPort);
      return u.toString();
    },
    arm(when, times = 1) {
      for (let i = 0; i < times; i++) armed.push(when);
    },
    stats,
    async takeDown() {
      // close() waits for the open connections, destroyed right after it stops the listening.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async bringBack() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(proxyPort, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
