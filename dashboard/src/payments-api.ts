// Adding credit through Stripe Checkout (docs/adr/0050-stripe-top-ups.md): whether the gateway has
// payments configured, and a checkout for an amount — with an account token or a key, whose account pays.
import { getJson } from './api.js';

export interface CheckoutOptionsJson {
  object: 'checkout_options';
  currency: 'usd';
  enabled: boolean;
  min_amount: number | null;
  max_amount: number | null;
}

export interface CheckoutJson {
  object: 'checkout_session';
  id: string;
  url: string;
  amount: number;
  currency: 'usd';
  account_id: string;
}

export function checkoutOptions(token: string): Promise<CheckoutOptionsJson> {
  return getJson('/v1/account/checkout', { token });
}

/** The amount as typed: the server reads it exactly and names what is wrong with it. */
export function startCheckout(token: string, amount: string, idempotencyKey: string): Promise<CheckoutJson> {
  return getJson('/v1/account/checkout', { token, body: { amount }, idempotencyKey });
}
