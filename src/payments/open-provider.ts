// The configured payment provider, its SDK loaded on first use (a gateway without payments.stripe never
// loads it, and one with it starts as fast): undefined when the config has none.
import type { Config } from '../config/types.js';
import type { PaymentProvider } from './types.js';

export function paymentProvider(config: Config): PaymentProvider | undefined {
  const stripe = config.payments.stripe;
  if (!stripe) return undefined;
  let opened: Promise<PaymentProvider> | undefined;
  const open = (): Promise<PaymentProvider> => (opened ??= import('./stripe/stripe-provider.js').then((m) => m.stripeProvider(stripe)));
  return {
    startCheckout: async (order) => (await open()).startCheckout(order),
    readWebhook: async (body, signature) => (await open()).readWebhook(body, signature),
  };
}
