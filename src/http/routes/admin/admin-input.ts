// Reading admin API input at the edge: JSON bodies and query strings checked against a strict zod
// schema, so an unknown field or a wrong type is a 400 invalid_request naming it. The values' meaning
// (amounts, limits, models) is checked by the operations, the same for every face.
import { z } from 'zod';
import { GatewayError } from '../../../errors.js';

function describe(issue: z.core.$ZodIssue): { param: string; message: string } {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const field = [path, issue.keys[0]].filter(Boolean).join('.');
    return { param: field, message: `Unknown field '${field}'${issue.keys.length > 1 ? ` (and ${issue.keys.length - 1} more)` : ''}.` };
  }
  return { param: path, message: `Invalid '${path || 'body'}': ${issue.message}.` };
}

/** The value checked by `schema`, or a 400 naming the first problem. */
export function readInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const { param, message } = describe(result.error.issues[0]!);
  throw new GatewayError('invalid_request', { param: param || null, message });
}

/** Amounts may be JSON numbers or decimal strings (exact to the nano-dollar). */
export const amountField = z.union([z.number(), z.string()]);

/** A limit: a number, or null to clear it. */
const limitField = z.union([z.number(), z.string(), z.null()]).optional();

export const limitsObject = z.strictObject({
  rpm: limitField,
  tpm: limitField,
  max_concurrent: limitField,
  budget: limitField,
  budget_period: z.union([z.string(), z.null()]).optional(),
});

export const modelsField = z.union([z.array(z.string()), z.literal('*')]);

export const metadataField = z.record(z.string(), z.unknown());

/** List query strings: every value a single string. */
export const listQuery = { limit: z.string().optional(), after: z.string().optional() };

export const usageFilterQuery = {
  key_id: z.string().optional(),
  account_id: z.string().optional(),
  model: z.string().optional(),
  provider: z.string().optional(),
  status: z.string().optional(),
  endpoint: z.string().optional(),
  session_id: z.string().optional(),
  request_id: z.string().optional(),
  since: z.string().optional(),
  until: z.string().optional(),
};
