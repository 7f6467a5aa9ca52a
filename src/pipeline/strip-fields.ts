// The one exception to pass-through: fields that name credentials or endpoints (`api_key`, `api_base`,
// `base_url`, ...) are removed from a client body before it goes upstream — an upstream that is itself a
// proxy (LiteLLM honours `api_base` in the body: CVE-2024-6587) must never be steered or re-keyed by a
// client. The list is per provider (`providers.<id>.strip_fields`; its default is in config/schema.ts).

/** `body` itself when it carries none of the fields (the usual case: no copy), else a copy without them. */
export function stripFields<B extends object>(body: B, fields: readonly string[]): { body: B; stripped: readonly string[] } {
  let stripped: string[] | undefined;
  for (const field of fields) if (Object.hasOwn(body, field)) (stripped ??= []).push(field);
  if (!stripped) return { body, stripped: NONE };
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of stripped) delete copy[field];
  return { body: copy as B, stripped };
}

const NONE: readonly string[] = Object.freeze([]);
