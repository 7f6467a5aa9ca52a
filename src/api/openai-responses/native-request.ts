// The native cell of the Responses API (product.md §14): an upstream that speaks it (`serves` includes
// `responses`: openai, azure-openai, or a compatible server that declares it) gets the client's body as it
// came with only `model` replaced — `encrypted_content`, `include`, `store`, `prompt_cache_key`, item ids
// untouched — at `{base path}{the kind's Responses path}` (Azure: `/openai/v1/responses`, the deployment
// as `model`). No client header goes with it: never a credential (the transport signs each attempt).
import type { JsonObject } from '../../json-object.js';
import { providerKind } from '../../providers/kinds.js';
import type { UpstreamRequest } from '../../providers/types.js';
import type { Candidate } from '../../routing/resolve-route.js';
import { stringValueSpans } from '../json-splice.js';
import { rawLayoutOf, splicedRaw } from '../raw-body.js';

/**
 * The body for an upstream whose model is `upstreamModel`: the client's bytes with the model spliced in,
 * or — when the body was changed since it was received (a clamp, stripped fields) — its serialisation.
 */
export function nativeBodyText(body: JsonObject, upstreamModel: string): UpstreamRequest['body'] & {} {
  const layout = rawLayoutOf(body);
  const spans = layout && stringValueSpans(layout.members, 'model');
  return (spans && splicedRaw(body, spans, JSON.stringify(upstreamModel))) ?? JSON.stringify({ ...body, model: upstreamModel });
}

/** The path of one of the candidate's native Responses operations, after its base path. */
export function nativePath(candidate: Candidate, path: string | undefined): string | undefined {
  return path === undefined ? undefined : `${candidate.target.provider.basePath}${path}`;
}

export function buildNativeResponsesRequest(body: JsonObject, candidate: Candidate): UpstreamRequest {
  const path = nativePath(candidate, providerKind(candidate.provider.kind).nativePaths.responses);
  // cellFor keeps only candidates whose kind has the path: config refuses `serves: [responses]` otherwise.
  if (path === undefined) throw new Error(`provider kind ${candidate.provider.kind} has no Responses API`);
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', accept: body.stream === true ? 'text/event-stream' : 'application/json' },
    body: nativeBodyText(body, candidate.target.upstreamModel),
    native: true,
  };
}
