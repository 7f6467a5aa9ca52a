// What an answer left stored upstream (Responses: its response id and output item ids) is recorded once
// the request is settled, with the upstream account that served it and the response's token counts — so
// that a later request naming one is pinned to that account and holds its context (product.md §14).
// Never content: ids and counts only, kept 30 days.
import type { Charge, UsageDraft } from './admission/reservation.js';
import type { StoredIds } from './client-api.js';
import type { ClientRequest, PipelineDeps } from './deps.js';

/** How long a stored id is remembered (OpenAI keeps stored responses 30 days). */
export const STORED_IDS_KEEP_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Records `ids` for the request's key, before the client is answered (its next request may name them at
 * once). A request that was charged nothing left nothing to name; a failed write is logged, never the
 * request's failure (its money is settled; a later request naming these ids gets a 404 instead).
 */
export async function recordStoredIds(deps: PipelineDeps, client: ClientRequest, draft: UsageDraft, charge: Charge, ids: StoredIds | undefined): Promise<void> {
  if (!ids || !deps.responseState || charge.settlement.kind === 'release') return;
  const { tokens } = charge.settlement;
  try {
    await deps.responseState.record({
      keyId: client.key.id,
      responseId: ids.responseId,
      itemIds: ids.itemIds,
      provider: draft.provider,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      expiresAt: Date.now() + STORED_IDS_KEEP_MS,
    });
  } catch (error) {
    deps.log.warn({ err: error, requestId: client.requestId }, 'could not record the ids of a stored response');
  }
}
