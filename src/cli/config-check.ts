// `tollgate config check`: validates the config and prints what it resolves to, secrets masked.
import type { Command } from 'commander';
import { formatUsd, nanoToUsd } from '../billing/money.js';
import type { Config } from '../config/types.js';
import { disabledModelLine } from '../config/usable-upstreams.js';
import { loadCommandConfig } from './context.js';
import { printJson, printTable } from './format.js';

function mask(secret: string): string {
  if (secret === '') return '(none)';
  return secret.length <= 8 ? '****' : `${secret.slice(0, 3)}...${secret.slice(-4)}`;
}

function summary(config: Config): Record<string, unknown> {
  return {
    file: config.path,
    database: config.database.replace(/\/\/[^@/]*@/, '//***@'),
    server: config.server,
    providers: [...config.providers.values()].map((p) => ({
      id: p.id,
      kind: p.kind,
      base_url: p.baseUrl,
      api_key: mask(p.apiKey),
      // false: the kind needs an api_key and there is none, so its upstreams are never called.
      configured: p.configured,
      ...(p.apiVersion ? { api_version: p.apiVersion } : {}),
    })),
    models: [...config.models.values()].map((m) => ({
      id: m.id,
      type: m.type,
      routing: m.routing,
      upstreams: m.upstreams.map((u) => `${u.provider}/${u.model}`),
      price: m.displayPrice,
      context_window: m.contextWindow ?? null,
      max_output_tokens: m.maxOutputTokens ?? null,
    })),
    // Whether /admin/v1 is served; the token itself is never printed.
    admin_api: config.admin.token === undefined ? 'off' : 'on',
    // Stripe top-ups (ADR 0050): the bounds and where the SDK calls; never a secret.
    payments: config.payments.stripe
      ? {
          provider: 'stripe',
          currency: config.payments.stripe.currency,
          min_amount: nanoToUsd(config.payments.stripe.minAmount),
          max_amount: nanoToUsd(config.payments.stripe.maxAmount),
          api_base: config.payments.stripe.apiBase?.origin ?? 'https://api.stripe.com',
        }
      : 'off',
    // Signed webhooks out (ADR 0052): where events go and which; never a signing secret.
    webhooks: config.notifications.webhooks.map((hook) => ({ url: hook.url, events: hook.events })),
    balance_low_usd: config.notifications.balanceLow === null ? null : nanoToUsd(config.notifications.balanceLow),
    // Models not offered because none of their upstreams can be called, each with the reason.
    disabled_models: config.disabledModels,
    warnings: config.warnings,
  };
}

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the config and print the resolved models and upstreams')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }, command: Command) => {
      const loaded = loadCommandConfig(command);
      const resolved = summary(loaded);
      if (opts.json) return printJson(resolved);
      process.stdout.write(`config ${loaded.path} is valid\n\nproviders:\n`);
      printTable(
        ['ID', 'KIND', 'BASE URL', 'API KEY'],
        (resolved.providers as Array<Record<string, string>>).map((p) => [p.id!, p.kind!, p.base_url!, p.api_key!]),
      );
      process.stdout.write('\nmodels:\n');
      printTable(
        ['ID', 'TYPE', 'UPSTREAMS', 'INPUT', 'OUTPUT', 'CACHED'],
        [...loaded.models.values()].map((m) => [
          m.id,
          m.type,
          m.upstreams.map((u) => `${u.provider}/${u.model}`).join(', '),
          String(m.displayPrice.input),
          m.displayPrice.output === undefined ? '-' : String(m.displayPrice.output),
          m.displayPrice.cached_input === undefined ? '-' : String(m.displayPrice.cached_input),
        ]),
      );
      process.stdout.write(`\nadmin API (/admin/v1): ${String(resolved.admin_api)}\n`);
      const stripe = loaded.payments.stripe;
      process.stdout.write(`payments: ${stripe ? `stripe, ${formatUsd(stripe.minAmount)} to ${formatUsd(stripe.maxAmount)} USD per checkout, API ${stripe.apiBase?.origin ?? 'https://api.stripe.com'}` : 'off'}\n`);
      const hooks = loaded.notifications.webhooks;
      process.stdout.write(`webhooks: ${hooks.length === 0 ? 'off' : hooks.map((h) => `${h.url} (${h.events === '*' ? 'every event' : h.events.join(', ')})`).join('; ')}\n`);
      for (const warning of [...loaded.disabledModels.map(disabledModelLine), ...loaded.warnings]) process.stderr.write(`warning: ${warning}\n`);
    });
}
