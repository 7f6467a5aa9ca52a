// The operator's verbs on keys, written once: the CLI (cli/keys.ts) and the admin API call these, and
// the dashboard reaches them through the admin API. Input is validated here (400 invalid_request naming
// the field, 404 key_not_found), so every face refuses the same things the same way.
import { randomUUID } from 'node:crypto';
import type { Nano } from '../billing/money.js';
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { generateKeyId, generateKeySecret, hashKeySecret, keyPrefix } from '../keys/secret.js';
import type { AllowedModels, KeyRecord, Store } from '../storage/types.js';
import { toLimitsPatch, type LimitsInput } from './limits-input.js';

export interface IssueKeyInput {
  readonly name: string;
  readonly balance?: Nano;
  /** Model ids, or '*' (the default): every configured model. */
  readonly allowedModels?: readonly string[] | '*';
  readonly limits?: LimitsInput;
}

export interface IssuedKey {
  readonly key: KeyRecord;
  /** Shown once; only its hash is stored. */
  readonly secret: string;
}

export async function requireKey(store: Store, id: string): Promise<KeyRecord> {
  const key = await store.keys.get(id);
  if (!key) throw new GatewayError('key_not_found', { message: `No key with id ${id}.` });
  return key;
}

/** Model ids must be configured ones; '*' allows every model. */
export function allowedModelsOf(models: readonly string[] | '*', config: Config): AllowedModels {
  if (models === '*') return '*';
  const unknown = models.filter((id) => !config.models.has(id));
  if (unknown.length > 0) {
    throw new GatewayError('invalid_request', {
      param: 'allowed_models',
      message: `Unknown model(s) ${unknown.join(', ')}; configured: ${[...config.models.keys()].join(', ')}.`,
    });
  }
  return [...new Set(models)];
}

export async function issueKey(store: Store, config: Config, input: IssueKeyInput, now = Date.now()): Promise<IssuedKey> {
  if (input.name.trim() === '') throw new GatewayError('invalid_request', { param: 'name', message: "Invalid 'name': it must not be empty." });
  const patch = toLimitsPatch(input.limits ?? {}, now);
  const secret = generateKeySecret();
  const key = await store.keys.create({
    id: generateKeyId(),
    name: input.name,
    prefix: keyPrefix(secret),
    secretHash: hashKeySecret(secret),
    allowedModels: allowedModelsOf(input.allowedModels ?? '*', config),
    initialBalance: input.balance ?? 0,
    topupRequestId: `topup_${randomUUID()}`,
    now,
    limits: {
      rpm: patch.rpm ?? null,
      tpm: patch.tpm ?? null,
      maxConcurrent: patch.maxConcurrent ?? null,
      budget: patch.budget ?? null,
      budgetPeriod: patch.budgetPeriod ?? null,
    },
    expiresAt: patch.expiresAt ?? null,
  });
  return { key, secret };
}

export async function topUpKey(store: Store, id: string, amount: Nano, now = Date.now()): Promise<KeyRecord> {
  await requireKey(store, id);
  return (await store.keys.topUp(id, amount, `topup_${randomUUID()}`, now))!;
}

export async function setKeyModels(store: Store, config: Config, id: string, models: readonly string[] | '*'): Promise<KeyRecord> {
  await requireKey(store, id);
  return (await store.keys.setAllowedModels(id, allowedModelsOf(models, config)))!;
}

export async function setKeyLimits(store: Store, id: string, input: LimitsInput, now = Date.now()): Promise<KeyRecord> {
  const patch = toLimitsPatch(input, now);
  await requireKey(store, id);
  return (await store.keys.setLimits(id, patch))!;
}

export async function revokeKey(store: Store, id: string, now = Date.now()): Promise<KeyRecord> {
  await requireKey(store, id);
  return (await store.keys.revoke(id, now))!;
}
