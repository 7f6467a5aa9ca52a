// The operator's verbs on keys, written once: the CLI (cli/keys.ts) and the admin API call these, and
// the dashboard reaches them through the admin API. Input is validated here (400 invalid_request naming
// the field, 404 key_not_found), so every face refuses the same things the same way.
import { randomUUID } from 'node:crypto';
import type { Nano } from '../billing/money.js';
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { generateKeyId, generateKeySecret, hashKeySecret, keyPrefix } from '../keys/secret.js';
import type { KeyChange, KeyRecord, Store } from '../storage/types.js';
import { requireAccount } from './accounts.js';
import { allowedModelsOf } from './allowed-models.js';
import { toLimitsPatch, type LimitsInput } from './limits-input.js';
import { metadataOf } from './metadata-input.js';

export interface IssueKeyInput {
  readonly name: string;
  /** The account the key draws on; absent: a personal account, holding `balance`, is made for it. */
  readonly accountId?: string;
  readonly balance?: Nano;
  /** Model ids, or '*' (the default): every configured model. */
  readonly allowedModels?: readonly string[] | '*';
  readonly limits?: LimitsInput;
  readonly metadata?: unknown;
}

/** A change to a key (PATCH): a field left out stays as it is. */
export interface KeyUpdateInput {
  readonly name?: string;
  readonly allowedModels?: readonly string[] | '*';
  /** rpm, tpm, ..., and expires_at: as in set-limits (null clears the key's own value). */
  readonly limits?: LimitsInput;
  /** Replaces the key's metadata. */
  readonly metadata?: unknown;
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

const MAX_NAME_LENGTH = 200;

function nameOf(name: string): string {
  if (name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw new GatewayError('invalid_request', { param: 'name', message: `Invalid 'name': it must not be empty or longer than ${MAX_NAME_LENGTH} characters.` });
  }
  return name;
}

export async function issueKey(store: Store, config: Config, input: IssueKeyInput, now = Date.now()): Promise<IssuedKey> {
  nameOf(input.name);
  const patch = toLimitsPatch(input.limits ?? {}, now);
  if (input.accountId !== undefined) {
    if (input.balance !== undefined && input.balance !== 0) {
      throw new GatewayError('invalid_request', {
        param: 'balance',
        message: 'A key in an account has no balance of its own: top up the account instead (or cap the key with credit_limit).',
      });
    }
    await requireAccount(store, input.accountId);
  }
  const metadata = input.metadata === undefined ? undefined : metadataOf(input.metadata);
  const secret = generateKeySecret();
  const key = await store.keys.create({
    id: generateKeyId(),
    ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
    creditLimit: patch.creditLimit ?? null,
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
  // Metadata is an admin API field; most keys have none, so it is not part of the insert.
  return { key: metadata === undefined ? key : (await store.keys.update(key.id, { metadata }))!, secret };
}

/** Changes the fields given (one statement: all or nothing), after checking every one of them. */
export async function updateKey(store: Store, config: Config, id: string, input: KeyUpdateInput, now = Date.now()): Promise<KeyRecord> {
  const change: KeyChange = {
    ...(input.name !== undefined ? { name: nameOf(input.name) } : {}),
    ...(input.allowedModels !== undefined ? { allowedModels: allowedModelsOf(input.allowedModels, config) } : {}),
    ...(input.metadata !== undefined ? { metadata: metadataOf(input.metadata) } : {}),
    ...toLimitsPatch(input.limits ?? {}, now),
  };
  await requireKey(store, id);
  return (await store.keys.update(id, change))!;
}

/** A new secret for the same key: the old one stops working at once; balance, limits and history stay. */
export async function rotateKey(store: Store, id: string): Promise<IssuedKey> {
  const current = await requireKey(store, id);
  if (current.status !== 'active') {
    throw new GatewayError('invalid_request', { message: `Key ${id} is revoked; a revoked key cannot be given a new secret.` });
  }
  const secret = generateKeySecret();
  const key = (await store.keys.rotate(id, keyPrefix(secret), hashKeySecret(secret)))!;
  return { key, secret };
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
