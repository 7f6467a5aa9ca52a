// The shapes the dashboard reads from the public APIs: the server's own presenter types
// (src/operations/json-types.ts), imported type-only — the bundle holds no server code, and a field the
// server changes fails the dashboard's typecheck instead of drifting. Money is USD as a decimal number,
// exactly as the API gives it; the page never does arithmetic on it beyond display.
export type {
  AccountHolderJson,
  AccountJson,
  AccountKeyJson,
  IssuedAccountKeyJson,
  IssuedAccountTokenJson,
  IssuedKeyJson,
  KeyHolderAnswerJson,
  KeyHolderJson,
  KeyJson,
  LedgerEntryJson,
  LimitsJson,
  ListPage,
  ModelJson,
  ModelListJson,
  ProviderHealthJson,
  UnauthenticatedJson,
  UpstreamHealthJson,
  UsageGroupingJson,
  UsageJson,
  UsageSummaryJson,
  UsageTotalsJson,
  WebhookEventJson,
} from '../../src/operations/json-types.js';
